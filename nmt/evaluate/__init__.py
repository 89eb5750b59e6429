"""Stage 6, evaluate: scores (`scoring`), attention heatmaps (`attention`), report pages
(`report`); the stage itself is `stage`."""
