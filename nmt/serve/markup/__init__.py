"""Documents as translation units: HTML scanning and inline tags (`htmlscan`, `inline`, `html`),
.docx runs (`office`), tag alignment (`align`, `pairs`), the file formats (`formats/`: one module
per format behind one `read_document`) and the offline document path (`offline`). Imports `engine`
and `observe`, never the API."""
