"""Loads files with Hugging Face `datasets` and pandas as a user would, for the tests that run where
python3 has them (test/helpers/python.ts). Prints one JSON document on stdout.

  hf_load.py files [--chunksize N] <file>...
                                 each file with datasets (json / csv / parquet builder, a fresh cache
                                 per file; the json builder reading N-byte chunks) and pandas:
                                 {"file", "datasets", "rows", "json_columns", "pandas"}
  hf_load.py folders <folder>... each hf export folder with load_dataset(<folder>), one after the other
                                 in ONE cache: {"folder", "splits": {split: [ids]}}
  hf_load.py rows <folder>       one export folder with load_dataset(<folder>): {"features": {column:
                                 feature}, "splits": {split: [row, ...]}}, each row as datasets gives it
"""
import json
import os
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"

import datasets  # noqa: E402
import pandas as pd  # noqa: E402

datasets.disable_progress_bars()
datasets.logging.set_verbosity_error()

BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


def json_columns(feature, path=""):
    """Paths of the columns datasets keeps as JSON text, as /a/[]/b."""
    if type(feature).__name__ == "Json":
        return [path]
    if isinstance(feature, dict):
        return [p for key, sub in feature.items() for p in json_columns(sub, f"{path}/{key}")]
    inner = getattr(feature, "feature", None)
    if type(feature).__name__ in ("List", "LargeList", "Sequence") and inner is not None:
        return json_columns(inner, f"{path}/[]")
    return []


def read_with_pandas(path, ext):
    if ext == ".csv":
        return pd.read_csv(path)
    if ext == ".parquet":
        return pd.read_parquet(path)
    if ext == ".jsonl":
        return pd.read_json(path, lines=True)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    stripped = text.lstrip()
    if stripped.startswith("["):
        return pd.read_json(path)
    first = stripped.split("\n", 1)[0]
    try:
        json.loads(first)
        return pd.read_json(path, lines=True)  # JSON Lines under a .json name (ACEBench's files)
    except ValueError:
        return pd.read_json(path, typ="series")  # one object: one record


def error_text(e):
    text = f"{type(e).__name__}: {e}".splitlines()[0][:300]
    cause = e.__cause__ or e.__context__
    return f"{text} <- {type(cause).__name__}: {str(cause).splitlines()[0][:300] if str(cause) else ''}" if cause else text


def load_files(files):
    options = {}
    if files[:1] == ["--chunksize"]:
        options["chunksize"] = int(files[1])
        files = files[2:]
    results = []
    for path in files:
        ext = os.path.splitext(path)[1]
        row = {"file": path}
        with tempfile.TemporaryDirectory(prefix="hf-load-") as cache:
            try:
                ds = datasets.load_dataset(BUILDERS[ext], data_files=path, split="train", cache_dir=cache, **(options if BUILDERS[ext] == "json" else {}))
                row.update(datasets="ok", rows=len(ds), json_columns=json_columns(ds.features))
            except Exception as e:  # noqa: BLE001 - every failure is a result
                row["datasets"] = error_text(e)
        try:
            frame = read_with_pandas(path, ext)
            row.update(pandas="ok", pandas_rows=len(frame))
        except Exception as e:  # noqa: BLE001
            row["pandas"] = error_text(e)
        results.append(row)
    return results


def load_folders(folders):
    results = []
    with tempfile.TemporaryDirectory(prefix="hf-shared-cache-") as cache:
        for folder in folders:
            loaded = datasets.load_dataset(folder, cache_dir=cache)
            results.append({"folder": folder, "splits": {split: list(loaded[split]["id"]) for split in loaded}})
    return results


def load_rows(folder):
    with tempfile.TemporaryDirectory(prefix="hf-rows-") as cache:
        loaded = datasets.load_dataset(folder, cache_dir=cache)
        features = {column: repr(feature) for column, feature in next(iter(loaded.values())).features.items()}
        return {"features": features, "splits": {split: list(loaded[split]) for split in loaded}}


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    modes = {"files": load_files, "folders": load_folders, "rows": lambda folders: load_rows(folders[0])}
    print(json.dumps(modes[mode](args)))
