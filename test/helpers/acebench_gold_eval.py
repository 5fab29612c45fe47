"""
Gold answers of an ACEBench export given to ACEBench's own code as a model's predictions.

A checkout of github.com/ACEBench/ACEBench (`--peer`) is copied to `--work` with the export's
`data_<language>/` in place of its data; every answer line becomes the result line a perfect model
would leave: the gold calls as a Python call list (normal), the sentence its prompt asks for
(special), and for the agent categories the state that ACEBench's own sandbox classes reach when the
answer's `mile_stone` is executed in them from the record's `initial_config`, as its generate.py does.
Then its eval_main.py scores them. The report (`--out`, JSON) gives per category the scores or the
error that stopped eval_main, and for agent records how many executed to the exported final state.
"""
import argparse, ast, json, os, re, shutil, subprocess, sys

CATEGORIES = [
    "normal_single_turn_single_function", "normal_single_turn_parallel_function", "normal_multi_turn_user_adjust",
    "normal_multi_turn_user_switch", "normal_similar_api", "normal_preference", "normal_atom_bool", "normal_atom_enum",
    "normal_atom_number", "normal_atom_list", "normal_atom_object_deep", "normal_atom_object_short",
    "special_incomplete", "special_error_param", "special_irrelevant", "agent_multi_step", "agent_multi_turn",
]
MODEL = "gold"


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def normal_result(data, answer):
    truth = answer["ground_truth"]
    first = truth[0] if isinstance(truth, list) else truth
    names = {fn["name"] for fn in data["function"]}
    calls = []
    for key, args in first.items():
        name = key if key in names else re.sub(r"_\d+$", "", key)
        calls.append(f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")")
    return "[" + ", ".join(calls) + "]"


def special_result(category, answer):
    truth = answer["ground_truth"]
    if "incomplete" in category:
        return " ".join(f"Missing necessary parameters ({', '.join(v)}) for the api ({k})" for k, v in truth.items())
    if "error" in category:
        # Values go into the sentence as a model writes them; eval_main then looks each one up as it is.
        return " ".join(f"There is incorrect value ({', '.join(str(x) for x in v)}) for the parameters ({k}) in the conversation history." for k, v in truth.items())
    return "Due to the limitations of the function, I cannot solve this problem."


def saved_class_table(work):
    """SAVED_CLASS of ACEBench's inference code, read from its source (importing it loads the model clients)."""
    with open(os.path.join(work, "model_inference", "common_inference.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "SAVED_CLASS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise RuntimeError("SAVED_CLASS not found in model_inference/common_inference.py")


def agent_result(work, category, language, data, answer, saved):
    """The classes' saved state after the answer's mile_stone runs through ACEBench's execution role and sandbox classes."""
    if work not in sys.path:
        sys.path.insert(0, work)
    if category == "agent_multi_step":
        from model_inference.multi_step.execution_role_step import EXECUTION_STEP as Execution
        from model_inference.multi_step import multi_step_utils as utils
    else:
        from model_inference.multi_turn.execution_role import EXECUTION as Execution
        from model_inference.multi_turn import multi_turn_utils as utils
    stones = answer["mile_stone"]
    sequence = stones[0] if stones and isinstance(stones[0], list) else stones
    execution = Execution(MODEL, data["initial_config"], data["involved_classes"], data["id"], language)
    instances = {}
    for stone in sequence:
        calls = execution.decode_function_list(stone)
        results, got = utils.execute_agent_func_call(calls, data["initial_config"], data["involved_classes"], MODEL, data["id"], language)
        if not isinstance(got, dict):
            raise RuntimeError(f"{stone}: {results}")
        instances.update(got)
    state = [{name: {k: v for k, v in vars(obj).items() if k in saved[name]}} for name, obj in instances.items()]
    return state, sequence


def score_of(work, language, category):
    line = read_lines(os.path.join(work, "score_all", f"score_{language}", MODEL, f"data_{category}_score.json"))[0]
    entry = {"accuracy": line.get("accuracy", line.get("end_to_end_accuracy")), "correct": line.get("correct_count"), "total": line.get("total_count")}
    if "process_accuracy" in line:
        entry["process_accuracy"] = line["process_accuracy"]
    return entry


def run(peer, export, language, work, separately):
    if os.path.exists(work):
        shutil.rmtree(work)
    shutil.copytree(peer, work, ignore=shutil.ignore_patterns("data_all", ".git"))
    data_dir = os.path.join(work, "data_all", f"data_{language}")
    shutil.copytree(os.path.join(export, f"data_{language}"), data_dir)
    saved = saved_class_table(work)
    report = {"language": language, "categories": {}, "agent": {"records": 0, "executed_as_exported": 0, "not_executed": [], "differs": []}}
    results_dir = os.path.join(work, "result_all", f"result_{language}", MODEL)
    os.makedirs(results_dir, exist_ok=True)
    os.makedirs(os.path.join(work, "score_all", f"score_{language}", MODEL), exist_ok=True)
    categories = [c for c in CATEGORIES if os.path.exists(os.path.join(data_dir, f"data_{c}.json"))]
    for category in categories:
        data = read_lines(os.path.join(data_dir, f"data_{category}.json"))
        answers = read_lines(os.path.join(data_dir, "possible_answer", f"data_{category}.json"))
        lines = []
        for d, a in zip(data, answers):
            if category.startswith("normal"):
                lines.append({"id": d["id"], "result": normal_result(d, a)})
            elif category.startswith("special"):
                lines.append({"id": d["id"], "result": special_result(category, a)})
            else:
                report["agent"]["records"] += 1
                try:
                    state, process = agent_result(work, category, language, d, a, saved)
                except Exception as error:  # the record could not run: a class its table lacks, a call it cannot parse
                    report["agent"]["not_executed"].append({"id": d["id"], "error": f"{type(error).__name__}: {error}"})
                    state, process = [], []
                else:
                    # Compared through JSON, as the result file carries it (ids kept as int keys read back as strings).
                    executed = {k: v for s in json.loads(json.dumps(state)) for k, v in s.items()}
                    exported = {k: v for s in a["ground_truth"] for k, v in s.items()}
                    if executed == exported and len(state) == len(a["ground_truth"]):
                        report["agent"]["executed_as_exported"] += 1
                    else:
                        report["agent"]["differs"].append(d["id"])
                lines.append({"id": d["id"], "result": state, "process": process})
        with open(os.path.join(results_dir, f"data_{category}_result.json"), "w", encoding="utf-8") as f:
            f.write("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n")
        report["categories"][category] = {"records": len(data)}
    batches = [[c] for c in categories] if separately else [categories]
    for batch in batches:
        proc = subprocess.run([sys.executable, "eval_main.py", "--model", MODEL, "--category", *batch, "--language", language], cwd=work, capture_output=True, text=True)
        for category in batch:
            entry = report["categories"][category]
            try:
                entry.update(score_of(work, language, category))
            except FileNotFoundError:
                entry["error"] = (proc.stderr.strip().splitlines() or [f"eval_main.py exited with {proc.returncode}"])[-1]
        if proc.returncode != 0:
            report.setdefault("eval_main_errors", []).append((proc.stderr.strip().splitlines() or ["?"])[-1])
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peer", required=True, help="a checkout of ACEBench's repository")
    parser.add_argument("--export", required=True, help="a folder written by `toolkiln export … --format acebench`")
    parser.add_argument("--language", required=True, choices=["en", "zh"])
    parser.add_argument("--work", required=True, help="a folder to copy the checkout to (replaced)")
    parser.add_argument("--out", required=True, help="where to write the report (JSON)")
    parser.add_argument("--separately", action="store_true", help="one eval_main.py run per category, so an error in one does not hide the others")
    args = parser.parse_args()
    report = run(args.peer, args.export, args.language, args.work, args.separately)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(report, f, ensure_ascii=False, indent=1)
