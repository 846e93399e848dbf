"""Prediction/gold texts shared by the SAS tests (repeats, an identical pair, an empty one)."""

PREDS = [
    "the eiffel tower is in paris",
    "paris is the capital of france",
    "a red cat",
    "the eiffel tower is in paris",
    "berlin",
    "",
]
GOLDS = [
    "the tower is in paris",
    "the capital of france is paris",
    "a blue dog",
    "the eiffel tower is in paris",
    "the capital of germany is berlin",
    "rome",
]
