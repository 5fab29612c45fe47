import type { SampleAudit } from '../../core/audit.ts';
import type { Finding } from '../../core/invariants.ts';
import type { Sample } from '../../core/records.ts';
import { sampleToConversation, toolTalkMetaOf } from './conversation.ts';
import { loadDatabases, type DatabasesJson } from './databases.ts';
import type { Databases } from './tool.ts';
import { createWorld } from './world.ts';

/**
 * ToolTalk's own audit: every ground-truth call of a conversation executed again, in order, on the
 * simulated tools — the world reset from the initial databases plus the conversation's overlay, its
 * clock at the conversation's timestamp, its user logged in as the conversation says — must give
 * back the response (or exception) the conversation records, byte for byte as JSON. This is
 * `replayReleased` (replay.ts) for one sample of any version, generated or imported.
 */
export function tooltalkAudits(databasesDir: string): SampleAudit[] {
  let databases: Databases | undefined;
  let calls = 0;
  return [
    {
      name: 'tooltalk/replay',
      description: 'each gold call, executed again on the simulated tools, gives the recorded response or exception',
      checked: () => calls,
      check(sample: Sample): Finding[] {
        if (sample.benchmark !== 'tooltalk') return [];
        const finding = (where: string, problem: string): Finding => ({ check: 'tooltalk/replay', sampleId: sample.id, where, problem });
        let conversation;
        let overlay: DatabasesJson;
        try {
          overlay = toolTalkMetaOf(sample).overlay as DatabasesJson;
          conversation = sampleToConversation(sample);
        } catch (error) {
          return [finding('meta.tooltalk', (error as Error).message)];
        }
        databases ??= loadDatabases(databasesDir);
        const world = createWorld({ databases, overlay, overlaySource: `sample ${sample.id}` });
        world.reset({ timestamp: conversation.metadata.timestamp, user: conversation.user as never });
        const findings: Finding[] = [];
        conversation.conversation.forEach((turn, position) => {
          (turn.apis ?? []).forEach((api, k) => {
            calls++;
            const { session_token: _recorded, ...parameters } = api.request.parameters;
            const actual = world.execute({ api_name: api.request.api_name, parameters });
            const recorded = { response: api.response, exception: api.exception };
            if (JSON.stringify(actual) !== JSON.stringify(recorded)) {
              const { path, got, want } = firstDifference(actual, recorded);
              findings.push(finding(`dialogue[${position}].calls[${k}] ${api.request.api_name}`, `executed again, ${path || 'the result'} is ${clip(JSON.stringify(got))} where the conversation records ${clip(JSON.stringify(want))}`));
            }
          });
        });
        return findings;
      },
    },
  ];
}

function clip(text: string | undefined): string {
  if (text === undefined) return 'nothing';
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

/** Where two JSON values first differ (`response.alarms[3].time`), and what each holds there. */
function firstDifference(got: unknown, want: unknown, path = ''): { path: string; got: unknown; want: unknown } {
  if (JSON.stringify(got) === JSON.stringify(want)) return { path, got, want };
  if (Array.isArray(got) && Array.isArray(want)) {
    for (let i = 0; i < Math.max(got.length, want.length); i++) if (JSON.stringify(got[i]) !== JSON.stringify(want[i])) return firstDifference(got[i], want[i], `${path}[${i}]`);
  } else if (isObject(got) && isObject(want) && JSON.stringify(Object.keys(got)) === JSON.stringify(Object.keys(want))) {
    for (const key of Object.keys(got)) if (JSON.stringify(got[key]) !== JSON.stringify(want[key])) return firstDifference(got[key], want[key], path ? `${path}.${key}` : key);
  }
  return { path, got, want };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}
