"""Configuration, torch-free: params.yaml as one typed `Params` (`params`), its sections
(`data`, `model`, `train`, `evaluate`, `export`, `promote`), and the YAML-to-dataclass loader (`loader`)."""
