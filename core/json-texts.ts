import { lineString, type LineText } from './jsonl.ts';

/**
 * JSON text of records that share parts: the text of each part serialised once, kept by the part's
 * object and reused wherever the same object turns up again. A stage that returns `{ ...sample,
 * meta }` keeps its input's `dialogue` and `tools` objects, and the last MTU stage gives every
 * sample tools from one library of a few dozen: their text is then copied, not made again.
 *
 * `stringify(value)` gives exactly the bytes of `JSON.stringify(value)`. Reusing a part's text is
 * right because records are never edited in place once made (core/stage.ts): a stage edits a copy.
 * The texts live as long as their objects (a WeakMap) and as long as the instance: one run.
 */
export class JsonTexts {
  /** A part's text: one string, or (a list whose items records share) its items' texts with the brackets and commas between them. */
  private readonly texts = new WeakMap<object, string | readonly string[]>();
  /** Items of shared lists seen once: kept apart the second time they come (most never come again). */
  private readonly seen = new WeakSet<object>();
  private readonly sharedItems: ReadonlySet<string>;
  private readonly freeze: boolean;
  /** `{"key":` and `,"key":` by field name. */
  private readonly keyTexts = new Map<string, readonly [string, string]>();

  /**
   * `sharedItems`: the fields whose list items are kept one by one, because records share the items
   * rather than the list (a sample's `tools`, drawn from one library); any other list is kept whole
   * (its items serialised one by one would cost more than they save).
   * `freeze`: every record serialised is frozen, deep, so a stage that edits one in place (which
   * would leave a stale text here) throws where it does it; for tests and stage authors, as it costs a walk per record.
   */
  constructor(options: { sharedItems?: readonly string[]; freeze?: boolean } = {}) {
    this.sharedItems = new Set(options.sharedItems ?? []);
    this.freeze = options.freeze ?? false;
  }

  /**
   * `JSON.stringify(value)`, with the text of the record's parts (its fields, and the items of its
   * lists) reused or kept; a value that was itself such a part gets its text back.
   */
  stringify(value: unknown): string {
    return lineString(this.line(value));
  }

  /**
   * The text of `stringify` as parts that make it one after the other (a LineText): the texts kept
   * for its parts are not copied into one string, for a writer that encodes them where they go.
   */
  line(value: unknown): LineText {
    if (!isPlainRecord(value)) return String(JSON.stringify(value));
    if (this.freeze) deepFreeze(value);
    const kept = this.texts.get(value);
    if (kept !== undefined) return kept;
    const parts: string[] = [];
    for (const key of Object.keys(value)) {
      const part = this.partText((value as Record<string, unknown>)[key], this.sharedItems.has(key));
      if (part === undefined) continue;
      parts.push(this.keyText(key, parts.length === 0));
      if (typeof part === 'string') parts.push(part);
      else for (const item of part) parts.push(item);
    }
    if (!parts.length) return '{}';
    parts.push('}');
    return parts;
  }

  /** `{"key":` (the first field) or `,"key":`, made once per field name (a record's fields are few; a record with many made-up names does not grow the cache past its bound). */
  private keyText(key: string, first: boolean): string {
    let texts = this.keyTexts.get(key);
    if (texts === undefined) {
      const name = JSON.stringify(key);
      texts = [`{${name}:`, `,${name}:`];
      if (this.keyTexts.size < MAX_KEY_TEXTS) this.keyTexts.set(key, texts);
    }
    return texts[first ? 0 : 1];
  }

  /** The text of a field's value (undefined: a value JSON leaves out), kept when it is an object or a list. */
  private partText(value: unknown, sharedItems: boolean): string | readonly string[] | undefined {
    if (typeof value !== 'object' || value === null) return JSON.stringify(value);
    const kept = this.texts.get(value);
    if (kept !== undefined) return kept;
    const text = Array.isArray(value) ? (sharedItems ? this.sharedListText(value) : JSON.stringify(value)) : isPlainRecord(value) ? JSON.stringify(value) : undefined;
    if (text === undefined) return JSON.stringify(value);
    this.texts.set(value, text);
    return text;
  }

  /**
   * A list whose items records share: serialised whole while none of its items came before (their
   * objects are remembered), item by item once one has (each item's text kept for the next time).
   */
  private sharedListText(list: unknown[]): string | readonly string[] {
    if (!list.some((item) => typeof item === 'object' && item !== null && (this.seen.has(item) || this.texts.has(item)))) {
      for (const item of list) if (typeof item === 'object' && item !== null) this.seen.add(item);
      return JSON.stringify(list);
    }
    // Parts, not one string: the items' texts are written where they go, not copied together first.
    const parts: string[] = ['['];
    for (let i = 0; i < list.length; i++) {
      if (i) parts.push(',');
      parts.push(this.itemText(list[i]));
    }
    parts.push(']');
    return parts;
  }

  /** A list item's text (`null` for what JSON leaves out of an object), kept when it is a plain object. */
  private itemText(item: unknown): string {
    if (!isPlainRecord(item)) return JSON.stringify(item) ?? 'null';
    const kept = this.texts.get(item);
    if (typeof kept === 'string') return kept;
    const text = JSON.stringify(item);
    this.texts.set(item, text);
    return text;
  }
}

/** Field names whose text is kept (see keyText). */
const MAX_KEY_TEXTS = 1024;

function deepFreeze(value: object): void {
  if (Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const part of Object.values(value)) if (typeof part === 'object' && part !== null) deepFreeze(part);
}

/** An object JSON writes as its own keys (no `toJSON`, not a list): its text can be put together from its fields' texts. */
function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}
