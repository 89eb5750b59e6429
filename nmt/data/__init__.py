"""The data stages, one module each, in pipeline order: `download` -> `validate` -> `tokenize`
-> `vocab` -> `binarize`. Each is a pure stage function plus a thin CLI (`python -m nmt.data.STAGE`);
`indexed` is the format of binarize's id files, which the train stage memory-maps."""
