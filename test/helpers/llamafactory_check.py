"""Runs LLaMA-Factory's own data code on a `--format sharegpt` export, for the test that runs where
python3 has `datasets` and a checkout of hiyouga/LLaMA-Factory is given (test/export-sharegpt.test.ts),
and by hand. Prints one JSON document on stdout.

  llamafactory_check.py <LLaMA-Factory src folder> <export folder> <tool format>...

For every entry of the export's dataset_info.json, read by LLaMA-Factory's parser
(data/parser.py get_dataset_list): its file loaded as LLaMA-Factory's loader loads a local file
(`datasets.load_dataset("json", data_files=…)`), each row through SharegptDatasetConverter
(data/converter.py), then the check its supervised preprocessing makes (an odd-length prompt and one
response), and each function_call and the tools text through FunctionFormatter and ToolFormatter
(data/formatter.py) with each tool format named. Only LLaMA-Factory's logging, constants and misc
helpers are stubbed (they pull in torch and transformers' training stack).
"""
import json
import os
import sys
import types
import warnings

warnings.filterwarnings("ignore")
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"

import datasets  # noqa: E402

datasets.disable_progress_bars()
datasets.logging.set_verbosity_error()

src, export_dir, *tool_formats = sys.argv[1:]


def package(name, path=None):
    module = types.ModuleType(name)
    module.__path__ = [path] if path else []
    sys.modules[name] = module
    return module


class Logger:
    skipped = []

    def warning_rank0(self, message, *args):
        Logger.skipped.append(str(message)[:200])

    def __getattr__(self, _name):
        return lambda *args, **kwargs: None


package("llamafactory", os.path.join(src, "llamafactory"))
package("llamafactory.data", os.path.join(src, "llamafactory", "data"))
package("llamafactory.extras")
logging_stub = types.ModuleType("llamafactory.extras.logging")
logging_stub.get_logger = lambda name=None: Logger()
sys.modules["llamafactory.extras.logging"] = logging_stub
constants_stub = types.ModuleType("llamafactory.extras.constants")
constants_stub.DATA_CONFIG = "dataset_info.json"
sys.modules["llamafactory.extras.constants"] = constants_stub
misc_stub = types.ModuleType("llamafactory.extras.misc")
misc_stub.use_modelscope = lambda: False
misc_stub.use_openmind = lambda: False
sys.modules["llamafactory.extras.misc"] = misc_stub
sys.modules["llamafactory.extras"].logging = logging_stub

from llamafactory.data.converter import SharegptDatasetConverter  # noqa: E402
from llamafactory.data.data_utils import Role  # noqa: E402
from llamafactory.data.formatter import FunctionFormatter, ToolFormatter  # noqa: E402
from llamafactory.data.parser import get_dataset_list  # noqa: E402

with open(os.path.join(export_dir, "dataset_info.json"), encoding="utf-8") as f:
    names = list(json.load(f))

report = {"datasets": {}}
data_args = types.SimpleNamespace(media_dir=export_dir)
for attr in get_dataset_list(names, export_dir):
    data = datasets.load_dataset("json", data_files=[os.path.join(export_dir, attr.dataset_name)], split=attr.split)
    converter = SharegptDatasetConverter(attr, data_args)
    counts = {"rows": len(data), "converted": 0, "skipped": 0, "function_calls": 0}
    failures = {fmt: {} for fmt in tool_formats}
    for example in data:
        Logger.skipped = []
        out = converter(example)
        prompt, response = out["_prompt"], out["_response"]
        if Logger.skipped or len(prompt) % 2 != 1 or len(response) != 1:
            counts["skipped"] += 1
            report.setdefault("first_skipped", {"id": example.get("id"), "why": Logger.skipped})
            continue
        counts["converted"] += 1
        for fmt in tool_formats:
            for message in prompt + response:
                if message["role"] != Role.FUNCTION.value:
                    continue
                try:
                    FunctionFormatter(slots=["{{content}}"], tool_format=fmt).apply(content=message["content"])
                except Exception as e:  # noqa: BLE001 - every failure is counted
                    key = f"function_call: {type(e).__name__}: {str(e)[:120]}"
                    failures[fmt][key] = failures[fmt].get(key, 0) + 1
            try:
                ToolFormatter(tool_format=fmt).apply(content=out["_tools"])
            except Exception as e:  # noqa: BLE001
                key = f"tools: {type(e).__name__}: {str(e)[:120]}"
                failures[fmt][key] = failures[fmt].get(key, 0) + 1
        counts["function_calls"] += sum(1 for message in prompt + response if message["role"] == Role.FUNCTION.value)
    report["datasets"][attr.dataset_name] = {**counts, "formatter_failures": failures}

print(json.dumps(report))
