"""The data stages, one module each, in pipeline order: `download` -> `validate` -> `tokenize`
-> `vocab`. Each is a pure stage function plus a thin CLI (`python -m nmt.data.STAGE`)."""
