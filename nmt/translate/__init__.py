"""Translating text, HTML and documents through a decode step it is given, the same for every caller.

What happens around a model's decoding: sentences cut with their layout kept (`nmt.text.sentences`), spans
kept (`spans`: URLs, numbers, emoji), glossary terms swapped in (`glossary`, `termswap`), the loop and
length guard (`guard`), a batch of sentences decoded with confidence (`decoding`), markup as units
with its tags put back by the model's own alignment (`markup/`: HTML, .docx, .srt; `formats/`, one
module per file format), and the steps a list of units takes before and after decoding (`units`).
`nmt serve` (its batcher decodes), `nmt translate` and the benches all drive it; it knows nothing
of HTTP. Torch-free: it sits on `runtime` and `decode`'s search.
"""
