"""The tool surface: the IR (`spec.model`) -> `ToolSpec`s, what the client and the model will read.

In: `Api` and the Config. Out: a tuple of `ToolSpec` (name, title, description, input/output schema,
annotations, request plan), plus problems. Naming, JSON Schema conversion, input and output schemas, text,
annotations, request plans, size budgets, operation selection and overrides, and the comparison of two
surfaces (`diff`) live here; so will the discovery index and client profiles.
"""
