import { UserError, messageOf } from '../../../core/errors.ts';
import type { Json } from '../../../core/records.ts';
import type { AceFunction, AceLanguage } from '../record.ts';
import { BaseApi } from './base-api.ts';
import { Finance } from './finance.ts';
import { FoodPlatform } from './food-platform.ts';
import { MessageApi } from './message.ts';
import { parseCallString, renderCall, type StructuredCall } from './python-call.ts';
import { ReminderApi } from './reminder.ts';
import { describeMethod, SANDBOX_CLASS_NAMES, signatureProblem, type MethodSpec, type Sandbox, type SandboxClassName } from './sandbox.ts';
import { Travel } from './travel.ts';

const CLASSES: Record<SandboxClassName, new (language: AceLanguage) => Sandbox> = {
  BaseApi, MessageApi, ReminderApi, FoodPlatform, Travel, Finance,
};

export function isSandboxClassName(name: string): name is SandboxClassName {
  return (SANDBOX_CLASS_NAMES as readonly string[]).includes(name);
}

/** A fresh instance of one family with its released defaults. */
export function createSandbox(className: SandboxClassName, language: AceLanguage): Sandbox {
  return new CLASSES[className](language);
}

export interface SessionOptions {
  /** The record's initial_config: `{ "BaseApi": {"wifi": true}, … }`. */
  initialConfig: Json;
  /** The record's involved_classes, in order (a method on several runs on each, in this order). */
  involvedClasses: readonly string[];
  language: AceLanguage;
  /** Names the record in error messages (default 'initial_config'). */
  where?: string;
}

/** What one call did: the call as rendered, and its result or why it was rejected. */
export interface CallOutcome {
  /** The call in Python syntax (or the text that failed to parse). */
  call: string;
  ok: boolean;
  result?: Json;
  /** Why the call was not run (unparseable, unknown method, bad arguments); state is unchanged. */
  error?: string;
}

/**
 * The involved sandboxes of one record, driven the way ACEBench's harness drives them: each class
 * loads its own initial_config entry and then the BaseApi entry (so every phone app shares the
 * BaseApi Wi-Fi and login settings, and an absent key falls back to the released default); a call
 * runs on every involved instance that has the method, and the last one's result is the call's.
 * Calls are checked against the method's parameters first, so a rejected call changes nothing.
 */
export class SandboxSession {
  readonly instances: readonly Sandbox[];
  /** initial_config keys naming no involved class (ACEBench ignores them; e.g. the released typo 'Baspi'). */
  readonly ignoredConfigKeys: readonly string[];
  /** Quotes the lenient reader took as text, summed over the strings executed. */
  repairedQuotes = 0;
  private readonly byMethod = new Map<string, { spec: MethodSpec; owners: Sandbox[] }>();

  constructor(options: SessionOptions) {
    const where = options.where ?? 'initial_config';
    const config = options.initialConfig;
    if (config === null || typeof config !== 'object' || Array.isArray(config)) throw new UserError(`${where}: must be a JSON object keyed by class name`);
    const seen = new Set<string>();
    this.instances = options.involvedClasses.map((name) => {
      if (!isSandboxClassName(name)) throw new UserError(`${where}: involved class '${name}' is not a sandbox (known: ${SANDBOX_CLASS_NAMES.join(', ')})`);
      if (seen.has(name)) throw new UserError(`${where}: involved class '${name}' is listed twice`);
      seen.add(name);
      const instance = createSandbox(name, options.language);
      if (Object.hasOwn(config, name)) instance.load(config[name], `${where}.${name}`);
      else instance.load({}, `${where}.${name}`);
      if (name !== 'BaseApi' && Object.hasOwn(config, 'BaseApi')) instance.load(config.BaseApi, `${where}.BaseApi`);
      return instance;
    });
    this.ignoredConfigKeys = Object.keys(config).filter((key) => key !== 'BaseApi' && !seen.has(key));
    for (const instance of this.instances) {
      for (const spec of instance.methods()) {
        const entry = this.byMethod.get(spec.name);
        if (entry) entry.owners.push(instance);
        else this.byMethod.set(spec.name, { spec, owners: [instance] });
      }
    }
  }

  /**
   * Runs calls in order: a call string (one released mile_stone entry, possibly several calls),
   * one structured call, or a list of them. Returns one outcome per call; a string that does
   * not parse gives one rejected outcome and runs nothing.
   */
  execute(input: string | StructuredCall | readonly (string | StructuredCall)[], options: { lenient?: boolean } = {}): CallOutcome[] {
    if (Array.isArray(input)) return (input as (string | StructuredCall)[]).flatMap((item) => this.execute(item, options));
    if (typeof input === 'string') {
      let calls: StructuredCall[];
      try {
        const parsed = parseCallString(input, options);
        calls = parsed.calls;
        this.repairedQuotes += parsed.repairedQuotes;
      } catch (error) {
        return [{ call: input, ok: false, error: messageOf(error) }];
      }
      // A blank step runs nothing, and says so rather than vanishing from the outcomes.
      if (!calls.length) return [{ call: input, ok: false, error: `call string ${JSON.stringify(input)}: holds no call` }];
      return calls.map((call) => this.run(call));
    }
    return [this.run(input as StructuredCall)];
  }

  private run(call: StructuredCall): CallOutcome {
    if (!call || typeof call.name !== 'string' || call.arguments === null || typeof call.arguments !== 'object' || Array.isArray(call.arguments)) {
      return { call: JSON.stringify(call), ok: false, error: 'a structured call needs a string name and an arguments object' };
    }
    const rendered = renderCall(call);
    const entry = this.byMethod.get(call.name);
    if (!entry) {
      const classes = this.instances.map((i) => i.className).join(', ');
      return { call: rendered, ok: false, error: `${rendered}: unknown method '${call.name}' (none of the involved classes ${classes} has it)` };
    }
    const problem = signatureProblem(entry.spec, call.arguments);
    if (problem) return { call: rendered, ok: false, error: `${rendered}: ${problem}` };
    let result: Json = null;
    try {
      for (const owner of entry.owners) result = owner.invoke(call.name, call.arguments);
    } catch (error) {
      // A state the initial_config loaded in a shape the method cannot read (e.g. a message without text).
      return { call: rendered, ok: false, error: `${rendered}: the sandbox could not run it on this state (${messageOf(error)}); check the record's initial_config` };
    }
    return { call: rendered, ok: true, result };
  }

  /** Every involved class's saved state, by class name. */
  state(): Record<string, Record<string, Json>> {
    return Object.fromEntries(this.instances.map((instance) => [instance.className, instance.snapshot()]));
  }

  /** The state in the released ground_truth shape: `[{ "BaseApi": {…} }, { "MessageApi": {…} }]`. */
  groundTruth(): Json[] {
    return this.instances.map((instance) => ({ [instance.className]: instance.snapshot() }));
  }

  /** The involved classes' methods in the released function-description shape, each name once. */
  functions(): AceFunction[] {
    return [...this.byMethod.values()].map(({ spec }) => describeMethod(spec, this.instances[0].language));
  }
}

export interface ExecuteOptions extends SessionOptions {
  calls: readonly (string | StructuredCall)[];
  lenient?: boolean;
}

export interface ExecuteResult {
  results: CallOutcome[];
  state: Record<string, Record<string, Json>>;
  groundTruth: Json[];
  ignoredConfigKeys: readonly string[];
  repairedQuotes: number;
}

/** Loads the initial_config, runs the calls in order, and returns each call's outcome and the final state. */
export function executeCalls(options: ExecuteOptions): ExecuteResult {
  const session = new SandboxSession(options);
  const results = session.execute(options.calls, { lenient: options.lenient });
  return { results, state: session.state(), groundTruth: session.groundTruth(), ignoredConfigKeys: session.ignoredConfigKeys, repairedQuotes: session.repairedQuotes };
}

