"""Documents as translation units: HTML scanning and inline tags (`htmlscan`, `inline`, `html`),
.docx runs (`office`), tag alignment (`align`, `pairs`) and the file formats (`formats/`: one module
per format behind one `read_document`)."""
