"""BFCL's own code on a toolkiln `--format bfcl` export, fed the gold answers.

Usage: bfcl_gold_check.py <bfcl-root> <export-dir> <outputs.jsonl>

<bfcl-root> is the `berkeley-function-call-leaderboard` folder of a ShishirPatil/gorilla checkout;
<outputs.jsonl> holds one line per entry, {"split", "id", "output"}, the gold calls as a model's
decoded output: [{"tool": {"param": value}}] (floats written as floats).

Only the checker is imported: `bfcl_eval.constants.model_config` (which imports every model
handler and their SDKs) is replaced by a mapping that says the gold names keep their dots. Each
split folder is read as BFCL reads its data folder: the category from the file name
(`extract_test_category`), the entries with `load_file`, prompt and possible answer aligned by
index. A single-turn entry is scored with `ast_checker`, an irrelevance entry with the rule of
eval_runner's relevance check (the decoded output is empty). Prints a JSON report: per split and
category the entries and how many are valid, and the first failures.
"""

import atexit
import json
import os
import shutil
import sys
import tempfile
import types
from pathlib import Path

bfcl_root, export_dir, outputs_path = sys.argv[1:4]
sys.path.insert(0, bfcl_root)
# eval_config makes result/score folders under the project root at import: keep them out of the checkout.
os.environ["BFCL_PROJECT_ROOT"] = tempfile.mkdtemp(prefix="bfcl-project-")
atexit.register(shutil.rmtree, os.environ["BFCL_PROJECT_ROOT"], True)


class _GoldModelConfig:
    underscore_to_dot = False


model_config = types.ModuleType("bfcl_eval.constants.model_config")
model_config.MODEL_CONFIG_MAPPING = {"gold": _GoldModelConfig()}
sys.modules["bfcl_eval.constants.model_config"] = model_config

from bfcl_eval.constants.enums import Language  # noqa: E402
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # noqa: E402
from bfcl_eval.utils import (  # noqa: E402
    extract_test_category,
    extract_test_category_from_id,
    is_empty_output,
    is_function_calling_format_output,
    load_file,
    sort_key,
)

outputs = {}
with open(outputs_path) as f:
    for line in f:
        record = json.loads(line)
        outputs[(record["split"], record["id"])] = record["output"]

report = {"splits": {}, "failures": [], "unscored_outputs": 0}
scored = set()
for split_dir in sorted(p for p in Path(export_dir).iterdir() if p.is_dir()):
    split = split_dir.name
    for data_file in sorted(split_dir.glob("*.json")):
        category = extract_test_category(data_file)
        entries = load_file(data_file, use_lock=False)
        answers = None if "irrelevance" in category else load_file(split_dir / "possible_answer" / data_file.name, use_lock=False)
        counts = report["splits"].setdefault(split, {}).setdefault(category, {"entries": 0, "valid": 0})
        if answers is not None and len(answers) != len(entries):
            report["failures"].append({"split": split, "file": data_file.name, "error": f"{len(entries)} entries, {len(answers)} answers"})
        if sorted(entries, key=sort_key) != entries:
            report["failures"].append({"split": split, "file": data_file.name, "error": "entries are not in BFCL's id order"})
        for index, entry in enumerate(entries):
            counts["entries"] += 1
            test_id = entry["id"]
            output = outputs.get((split, test_id))
            scored.add((split, test_id))
            if output is None:
                report["failures"].append({"split": split, "id": test_id, "error": "no gold output"})
                continue
            if extract_test_category_from_id(test_id) != category:
                report["failures"].append({"split": split, "id": test_id, "error": f"id names category {extract_test_category_from_id(test_id)}"})
                continue
            if answers is None:
                result = {"valid": is_empty_output(output), "error": ["a call where none is expected"]}
            elif not is_function_calling_format_output(output):
                result = {"valid": False, "error": ["gold output not in function calling format"]}
            else:
                if answers[index]["id"] != test_id:
                    report["failures"].append({"split": split, "id": test_id, "error": f"answer line {index} is {answers[index]['id']}"})
                    continue
                result = ast_checker(entry["function"], output, answers[index]["ground_truth"], Language.PYTHON, category, "gold")
            if result["valid"]:
                counts["valid"] += 1
            elif len(report["failures"]) < 20:
                report["failures"].append({"split": split, "id": test_id, "error": result.get("error"), "error_type": result.get("error_type")})
report["unscored_outputs"] = len(set(outputs) - scored)
print(json.dumps(report, sort_keys=True))
