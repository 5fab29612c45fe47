# Runs MetaTool's own prompt builder (src/prompt/prompt_construction.py) and runner (src/generation/run.py)
# on toolkiln's `--format toole` export (its dataset/ folder), with the gold answers as the model's.
# Usage: python3 metatool_gold.py <MetaTool checkout> <export's dataset dir> <work dir>
# Prints a summary line, the runner's outputs read back against the gold, and every problem found.
import sys, os, json, re, shutil, types, importlib
peer, dataset, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
shutil.copytree(os.path.join(peer, 'src'), os.path.join(work, 'src'))
shutil.copytree(dataset, os.path.join(work, 'dataset'))
os.chdir(work)
sys.path.insert(0, work)

# Stand-ins for what needs a server, a GPU or a model: Milvus (only the similar / reliability / multi-tool
# builders' retrieval, which the task files already did) and the model libraries run.py imports.
def stub(name, **attrs):
    m = types.ModuleType(name); m.__dict__.update(attrs); sys.modules[name] = m; return m
class _Any:
    def __init__(self, *a, **k): pass
    def __call__(self, *a, **k): return self
    def __getattr__(self, k): return _Any()
stub('pymilvus', connections=_Any(), utility=_Any(), FieldSchema=_Any, CollectionSchema=_Any, DataType=_Any(), Collection=_Any, db=_Any(), MilvusClient=_Any)
stub('src.embedding.milvus_database')
torch = stub('torch', inference_mode=lambda: (lambda f: f), tensor=lambda *a, **k: None)
stub('transformers', AutoTokenizer=_Any, AutoModelForCausalLM=_Any)
stub('huggingface_hub', snapshot_download=lambda *a, **k: None)
stub('fastchat'); stub('fastchat.model', load_model=_Any(), get_conversation_template=_Any(), add_model_args=lambda p: None)
stub('dotenv', load_dotenv=lambda *a, **k: None)
stub('openai', api_key=None, ChatCompletion=_Any())
for name in ('requests', 'urllib3'):
    try: importlib.import_module(name)
    except ImportError: stub(name, disable_warnings=lambda *a: None, exceptions=_Any())

import functools
from src.prompt.prompt_construction import PromptConstructor
# The builder reads both description files again for every tool it describes; read each once (same text).
PromptConstructor.read_tool_info = staticmethod(functools.lru_cache(maxsize=None)(PromptConstructor.read_tool_info))
pc = PromptConstructor()
tasks = {f: json.load(open(f'dataset/tmp_dataset/{f}.json')) for f in ['Task1', 'Task2-Subtask1', 'Task2-Subtask2', 'Task2-Subtask3', 'Task2-Subtask4']}
line = re.compile(r'^\d+\. tool name: (.*?), tool description: ', re.M)
problems = []
def exists(tool, where):
    try: pc.get_tool_description(tool)
    except Exception as e: problems.append(f'{where}: MetaTool has no description of {tool!r} ({type(e).__name__})')
big = json.load(open('dataset/big_tool_des.json')); small = [r['name_for_model'] for r in json.load(open('dataset/plugin_info.json'))]
names = list(big) + small
lower = {}
for n in names: lower.setdefault(n.lower(), []).append(n)
for k, v in lower.items():
    if len(v) > 1: problems.append(f'tool names equal without regard to case in plugin_info.json / big_tool_des.json: {v}')
rebuilt = 0
for f in ['Task2-Subtask1', 'Task2-Subtask2', 'Task2-Subtask3', 'Task2-Subtask4']:
    multi = f == 'Task2-Subtask4'
    for i, r in enumerate(tasks[f]):
        where = f'{f}[{i}]'
        cands = line.findall(r['action_prompt'])
        low = [c.lower() for c in cands]
        if len(set(low)) != len(low): problems.append(f'{where}: candidate names equal without regard to case: {cands}')
        for c in cands: exists(c, where)
        for t in (r['tool'] if multi else [r['tool']]): exists(t, where)
        prompt = pc.construct_single_prompt(r['query'], pc.get_tool_list_des(cands), **({'prefix_file': 'src/prompt/prompt_template/Action_prompt_multi_tool'} if multi else {}))
        # The exported prompts are JSON-quoted as in the released Task files; the builder's text inside the quotes.
        same = r['action_prompt'] in (prompt, f'"{prompt}"') and r['thought_prompt'] in (pc.construct_thought_prompt(r['query']), f'"{pc.construct_thought_prompt(r["query"])}"')
        if same: rebuilt += 1
        elif len(problems) < 50: problems.append(f'{where}: the prompt differs from what PromptConstructor builds from its query and candidates')
for r in tasks['Task1']:
    if r['thought_prompt'] in (pc.construct_thought_prompt(r['query']), f'"{pc.construct_thought_prompt(r["query"])}"'): rebuilt += 1
os.makedirs('prompt_data/scenario', exist_ok=True)
scen = sorted(n[:-5] for n in os.listdir('dataset/scenario'))
scenario_prompts = 0
for s in scen:
    pc.scenario_pipeline(s); scenario_prompts += len(json.load(open(f'prompt_data/scenario/{s}.json')))
print(json.dumps({'task_records': {f: len(v) for f, v in tasks.items()}, 'prompts_rebuilt_identically': rebuilt, 'scenario_files': len(scen), 'scenario_prompts_built': scenario_prompts}))

# The runner: tool_test_thought / tool_test_action over tool/test_data, the model replaced by the gold answer.
import io, contextlib
sys.argv = ['run.py']
sys.path.insert(0, os.path.join(work, 'src', 'generation'))
with contextlib.redirect_stdout(io.StringIO()):
    run = importlib.import_module('run')
gold = {}
def answer(labels): return ', '.join(labels) + '\nThe listed tools fit the query.' if labels else 'None\nNo listed tool fits the query.'
for r in tasks['Task1']: gold[r['thought_prompt']] = ('yes' if r['label'] == 'positive' else 'no') + '\n'
for f in ['Task2-Subtask1', 'Task2-Subtask2', 'Task2-Subtask3', 'Task2-Subtask4']:
    for r in tasks[f]:
        labels = [] if f == 'Task2-Subtask3' else (r['tool'] if f == 'Task2-Subtask4' else [r['tool']])
        gold[r['action_prompt']] = answer(labels); gold.setdefault(r['thought_prompt'], 'yes\n')
run.generation = lambda input, tokenizer, model: gold[input]
os.makedirs('tool/test_data/gold', exist_ok=True); os.makedirs('tool/new_test_res/gold', exist_ok=True)
for f, v in tasks.items():
    json.dump(v, open(f'tool/test_data/{f}.json', 'w'))
    if f != 'Task1': json.dump(v, open(f'tool/test_data/gold/{f}.json', 'w'))
with contextlib.redirect_stdout(io.StringIO()):
    run.tool_test_thought('gold', None, None)
    thought = {f: json.load(open(f'tool/new_test_res/gold/{f}.json')) for f in tasks}
    run.tool_test_action('gold', None, None)
# Reading the answers back: the candidate names the first line names, without regard to case (how a
# model's "weather" would be read), against the gold.
table = {}
for f in tasks:
    if f == 'Task1':
        recs = thought[f]; ok = sum((r['res'].split('\n')[0].strip() == 'yes') == (r['label'] == 'positive') for r in recs)
        table['awareness (Task1, res)'] = f'{ok}/{len(recs)}'; continue
    recs = json.load(open(f'tool/new_test_res/gold/{f}.json')); ok = 0
    for r in recs:
        cands = line.findall(r['action_prompt']); first = r['action_res'].split('\n')[0]
        chosen = sorted(c for c in cands if re.search(r'(?<![A-Za-z0-9_])' + re.escape(c) + r'(?![A-Za-z0-9_])', first, re.I))
        want = [] if f == 'Task2-Subtask3' else sorted(r['tool'] if f == 'Task2-Subtask4' else [r['tool']])
        ok += chosen == want
    table[f'{f} (action_res)'] = f'{ok}/{len(recs)}'
print(json.dumps({'runner_outputs_read_back_equal_to_gold': table}))
print('problems:', len(problems))
for p in problems[:30]: print(' ', p)
print(json.dumps({'summary': {'read_back': table, 'problems': len(problems)}}))
