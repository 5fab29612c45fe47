import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, relative } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { readSourceFile } from '../../core/source-files.ts';

/**
 * User documents that seed the API context tree (ACEBench §3.1.1: "we extract relevant information
 * from technical documents to guide the API generation"). A folder of text or Markdown files is one
 * domain, named after the folder; a single file belongs to the domain of the folder it sits in.
 * Their content guides the subdomain and functionality proposals: quoted in the prompt with an
 * LLM, and offline their headings and key phrases become the proposals themselves.
 */

export const DOCUMENT_EXTENSIONS = ['.md', '.markdown', '.txt'] as const;

export interface DocumentFile {
  /** As given or found (relative to the folder given, for files found in a folder). */
  name: string;
  text: string;
}

export interface DocumentDomain {
  domain: string;
  files: DocumentFile[];
}

/** One section of a document: a heading and the key phrases under it. */
export interface DocumentSection {
  heading: string;
  phrases: string[];
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A document's text; a missing, empty, binary or non-UTF-8 file is refused naming the file. */
export function readDocument(path: string, shown = path): string {
  if (!existsSync(path)) throw new UserError(`document ${shown} does not exist: fix the path in "documents" of the config`);
  const bytes = readSourceFile(path, { shown: `document ${shown}` });
  if (bytes.includes(0)) throw new UserError(`document ${shown} is binary (it holds NUL bytes): give text or Markdown files only`);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new UserError(`document ${shown} is not UTF-8 text: convert it to UTF-8 (e.g. iconv -t UTF-8) or remove it from "documents"`);
  }
  if (!text.replace(/^\uFEFF/, '').trim()) throw new UserError(`document ${shown} is empty: write some content into it or remove it from "documents"`);
  return text.replace(/^\uFEFF/, '');
}

/**
 * The domains the configured paths make, in the order given: a folder's documents (found at any
 * depth, text and Markdown only) form the domain named after the folder; a file joins the domain of
 * its parent folder. A folder with no document in it is refused.
 */
export function loadDocumentDomains(paths: readonly string[], resolvePath: (path: string) => string = (p) => p): DocumentDomain[] {
  const domains = new Map<string, DocumentFile[]>();
  const add = (domain: string, file: DocumentFile) => {
    const files = domains.get(domain) ?? [];
    if (!files.some((f) => f.name === file.name)) files.push(file);
    domains.set(domain, files);
  };
  for (const given of paths) {
    const path = resolvePath(given);
    let isFolder: boolean;
    try {
      isFolder = statSync(path).isDirectory();
    } catch {
      throw new UserError(`document ${given} does not exist: fix the path in "documents" of the config`);
    }
    if (!isFolder) {
      add(domainName(basename(dirname(path))), { name: given, text: readDocument(path, given) });
      continue;
    }
    const found = documentsIn(path);
    if (!found.length) throw new UserError(`document folder ${given} holds no ${DOCUMENT_EXTENSIONS.join(' / ')} file: add documents or remove it from "documents"`);
    for (const file of found) {
      const shown = join(given, relative(path, file));
      add(domainName(basename(path)), { name: shown, text: readDocument(file, shown) });
    }
  }
  return [...domains].map(([domain, files]) => ({ domain, files }));
}

/** Document files under a folder, sorted (so the tree does not depend on directory order). */
function documentsIn(folder: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.name.startsWith('.')) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) out.push(...documentsIn(path));
    else if ((DOCUMENT_EXTENSIONS as readonly string[]).includes(extname(entry.name).toLowerCase())) out.push(path);
  }
  return out;
}

/** `travel_agency` → `Travel Agency`. */
function domainName(folder: string): string {
  return folder
    .replace(/[_-]+/g, ' ')
    .trim()
    .replace(/\b\p{Ll}/gu, (c) => c.toUpperCase());
}

/**
 * The sections of a document. Markdown: the shallowest heading level that occurs more than once
 * (or the only one) gives the sections; deeper headings, bold phrases and the lead phrase of list
 * items ("- Refund requests: …") under a section are its key phrases. Plain text: short title-like
 * lines (no final stop) are headings, list items the phrases.
 */
export function documentSections(text: string): DocumentSection[] {
  const lines = text.split(/\r?\n/);
  const headings = lines.map((line, i) => ({ i, match: /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line) })).filter((h) => h.match);
  let marks: { i: number; level: number; title: string }[] = headings.map((h) => ({ i: h.i, level: h.match![1].length, title: h.match![2] }));
  if (!marks.length) {
    // Plain text: a short line without a final stop, followed by text, reads as a heading.
    marks = lines
      .map((line, i) => ({ i, level: 1, title: line.trim() }))
      .filter(({ i, title }) => title && !LIST_ITEM.test(lines[i]) && title.split(/\s+/).length <= 8 && title.length <= 60 && !/[.。:：;；,，!?！？]$/.test(title) && (lines[i + 1] ?? '').trim() !== '' && (i === 0 || !lines[i - 1].trim()));
  }
  const levels = [...new Set(marks.map((m) => m.level))].sort((a, b) => a - b);
  const sectionLevel = levels.find((level) => marks.filter((m) => m.level === level).length > 1) ?? levels[0];
  const sections: DocumentSection[] = [];
  let current: DocumentSection | undefined;
  const markAt = new Map(marks.map((m) => [m.i, m]));
  lines.forEach((line, i) => {
    const mark = markAt.get(i);
    if (mark && mark.level === sectionLevel) {
      current = { heading: cleanPhrase(mark.title), phrases: [] };
      sections.push(current);
      return;
    }
    if (!current) return;
    const phrases = mark && mark.level > sectionLevel ? [mark.title] : keyPhrases(line);
    for (const phrase of phrases.map(cleanPhrase)) if (phrase && !current.phrases.some((p) => p.toLowerCase() === phrase.toLowerCase())) current.phrases.push(phrase);
  });
  return sections.filter((s) => s.heading);
}

const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+/;

/** Bold phrases of a line, and a list item's lead phrase (up to a colon or dash, at most 6 words). */
function keyPhrases(line: string): string[] {
  const out = [...line.matchAll(/\*\*(.+?)\*\*|__(.+?)__/g)].map((m) => m[1] ?? m[2]);
  if (LIST_ITEM.test(line) && !out.length) {
    const item = line.replace(LIST_ITEM, '');
    const lead = item.split(/\s*(?::|：| - | — )\s*/)[0];
    if (lead && (lead.split(/\s+/).length <= 6 || /\p{Script=Han}/u.test(lead))) out.push(lead);
  }
  return out;
}

/** Markup and trailing punctuation off, whitespace collapsed, at most 80 characters. */
function cleanPhrase(text: string): string {
  return text
    .replace(/[`*_[\]]/g, '')
    .replace(/\(.*?\)$/, '')
    .replace(/[.。:：;；,，]+$/, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 80);
}

/** The documents' text for a prompt: each file under its name, cut to `maxChars` in all. */
export function documentExcerpt(files: readonly DocumentFile[], maxChars: number): string {
  let left = maxChars;
  const parts: string[] = [];
  for (const file of files) {
    if (left <= 0) break;
    const text = file.text.trim().slice(0, left);
    left -= text.length;
    parts.push(`--- ${file.name}\n${text}`);
  }
  return parts.join('\n\n');
}
