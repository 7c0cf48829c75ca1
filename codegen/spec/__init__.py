"""Understanding the spec: read (with limits), resolve $refs, upgrade Swagger 2.0, validate, normalize.

In: a spec location (path or URL) and the Config. Out: the intermediate representation in `model.py`
(`Api`, `Operation`, ...) plus the `Resolver` that maps every node back to its document and JSON pointer,
and a list of problems. Only `load.py` touches the disk or the network.
"""
