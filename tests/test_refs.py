"""Where a `$ref` points (codegen/spec/refs.py): a reference that is a fragment alone is split without urljoin, and
lands exactly where urljoin and urldefrag would send it."""

from __future__ import annotations

from urllib.parse import unquote, urldefrag, urljoin

import pytest

from codegen.spec.load import Documents
from codegen.spec.refs import Ref, Resolver

BASES = [
    "file:///specs/api.json",
    "file:///specs/dir%20x/api.yaml",
    "https://example.test/openapi.json?version=2",
    "https://example.test",
    "https://user@example.test:8080/a/b/../c;params/api.json",
    "urn:example:spec",
    "custom-scheme:/a/b.json",
]
REFS = [
    "#",
    "#/components/schemas/Pet",
    "#/components/schemas/a~1b~0c",
    "#/components/schemas/caf%C3%A9%20x",
    "#/paths/~1pets~1{id}/get?x=1;y",
    "#/a#b",
    "#/with space and: colon",
    "#/tab\there",
    "#/line\nbreak",
    "#x/y//z",
    "other.json#/components/schemas/Pet",
    "https://example.test/other.json",
]


@pytest.mark.parametrize("base", BASES)
def test_a_reference_lands_where_urljoin_and_urldefrag_send_it(base: str) -> None:
    resolver = Resolver(Documents(base, {base: {}}))
    for ref in REFS:
        uri, fragment = urldefrag(urljoin(base, ref))
        expected = Ref(uri or base, unquote(fragment))
        for _ in range(2):  # worked out, then remembered
            found = resolver.target(ref, Ref(base, "/paths"))
            assert (found.uri, found.pointer) == (expected.uri, expected.pointer), ref
