"""Runs MTU-Bench's own MTU-Eval/cal_score.py over MTU-Eval files with their gold answers as the
predictions, and prints the scores as one JSON document.

    python3 mtu_cal_score.py <MTU-Eval folder> [--index index.jsonl] FILE...

cal_score.py has no entry point: `score(predictions, references, ids, splits)` scores one set of
records of the four settings together (a setting without records divides by zero), so every FILE is
scored in one call. A record's setting is its file's (`S-S_eval.jsonl` → S-S); an `OOD_eval.jsonl`
record takes the category `index.jsonl` gives it (cal_score.py has no OOD rules of its own).

The released script does not run on the released files as it stands; the two changes it needs are
made on a copy in memory, and each must match exactly once (so a changed upstream file stops here):
  - `success_cnt, turn_rates, soft_turn_rates, task_process_rates = 0, [], [], [], []` unpacks five
    values into four names (ValueError), twice;
  - `round_idx` is the id's text after its last `_`, compared with `len(convo_list)` (TypeError): it
    is read as an int, twice.
Nothing else of the scorer is changed.

A gold answer becomes the text a model answers in (the paper's Thought / Action / Action Input):
one `Action:` / `Action Input:` pair per call with the arguments as JSON, and no `Action` line for a
record that calls nothing.
"""

import json
import os
import sys
import traceback
from collections import Counter

SETTINGS = ('S-S', 'S-M', 'M-S', 'M-M')

FIXES = [
    (
        'success_cnt, turn_rates, soft_turn_rates, task_process_rates = 0, [], [], [], []',
        'success_cnt, turn_rates, soft_turn_rates, task_process_rates = 0, [], [], []',
        2,
    ),
    (
        'diag_id, round_idx = item_id.rsplit("_", 1)[0], item_id.rsplit("_", 1)[1]',
        'diag_id, round_idx = item_id.rsplit("_", 1)[0], int(item_id.rsplit("_", 1)[1])',
        2,
    ),
]


def load_scorer(folder):
    """cal_score.py with the two fixes, its `from util import *` resolved from the same folder."""
    sys.path.insert(0, folder)
    with open(os.path.join(folder, 'cal_score.py'), encoding='utf-8') as handle:
        source = handle.read()
    for old, new, times in FIXES:
        found = source.count(old)
        if found != times:
            raise SystemExit(f'cal_score.py: expected {times} of {old!r}, found {found}; the script changed upstream')
        source = source.replace(old, new)
    scope = {'__name__': 'cal_score'}
    exec(compile(source, os.path.join(folder, 'cal_score.py'), 'exec'), scope)
    return scope['score']


def prediction_of(answer):
    """The gold answer written as a model's answer."""
    lines = ['Thought: The request is answered by the calls below.' if answer else 'Thought: No API call is needed.']
    for tool, arguments in answer.items():
        if tool == '':
            continue
        lines.append(f'Action: {tool}')
        lines.append(f'Action Input: {json.dumps(arguments, ensure_ascii=False)}')
    return '\n'.join(lines)


def read_jsonl(path):
    with open(path, encoding='utf-8') as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main(argv):
    folder, rest = argv[0], argv[1:]
    index_path = None
    if rest[:1] == ['--index']:
        index_path, rest = rest[1], rest[2:]
    category = {}
    if index_path:
        for entry in read_jsonl(index_path):
            category[(entry['file'], entry['id'])] = entry['category']
    predictions, references, ids, splits = [], [], [], []
    records = Counter()
    for path in rest:
        name = os.path.basename(path)
        for row in read_jsonl(path):
            if name.startswith('OOD'):
                split = category.get((name, row['id']))
                if split is None:
                    raise SystemExit(f'{path}: record {row["id"]} has no category in the index (give --index index.jsonl)')
            else:
                split = name.split('_')[0]
            predictions.append(prediction_of(row['answer']))
            references.append(row['answer'])
            ids.append(row['id'])
            splits.append(split)
            records[split] += 1
    score = load_scorer(folder)
    try:
        result = {'records': dict(records), 'scores': score(predictions, references, ids, splits)}
    except Exception as error:  # noqa: BLE001 - the crash is the finding
        frame = traceback.extract_tb(error.__traceback__)[-1]
        result = {'records': dict(records), 'error': f'{type(error).__name__}: {error}', 'at': f'{os.path.basename(frame.filename)}:{frame.lineno} {frame.line}'}
    print(json.dumps(result))


if __name__ == '__main__':
    main(sys.argv[1:])
