"""Data-validation gates (torch-free): `Gate` collects a stage's checks and writes its report
(`gate`), Great Expectations suites run through `suite`, and `reports` reads reports back."""
