import { stableStringify } from '../../core/hash.ts';
import type { CallRecord } from './comparators.ts';
import type { JsonObject } from './tool.ts';
import type { ToolRequest, ToolResult } from './world.ts';

/**
 * Calls of a conversation over imported tools, answered in evaluation: there are no databases to
 * run a call on, so a call the conversation recorded (same tool, same arguments) gets the result it
 * recorded — executed on the live server or simulated when the version was made — and any other
 * call fails, saying so. Each recorded call answers once, in order (a tool with state may answer
 * the same call differently the second time); the calls of the turns before the one evaluated have
 * answered already. A model that makes the gold calls is answered exactly as the conversation was.
 */
export class RecordedCalls {
  private readonly used = new Set<number>();

  /** `answered`: how many of the recorded calls the earlier turns made (they come first). */
  constructor(
    private readonly recorded: readonly CallRecord[],
    answered: number,
  ) {
    for (let i = 0; i < answered; i++) this.used.add(i);
  }

  execute(request: ToolRequest): ToolResult {
    if (request.parameters === null) return { response: null, exception: 'Failed to parse API call' };
    const key = stableStringify(request.parameters);
    const at = this.recorded.findIndex((call, i) => !this.used.has(i) && call.request.api_name === request.api_name && stableStringify(call.request.parameters) === key);
    if (at >= 0) {
      this.used.add(at);
      return { response: this.recorded[at].response as JsonObject | null, exception: this.recorded[at].exception };
    }
    const known = this.recorded.some((call) => call.request.api_name === request.api_name);
    const why = known ? `no recorded result of ${request.api_name} for these arguments` : `API ${request.api_name} is not called in this conversation`;
    return { response: null, exception: `${why} (the tools are imported: only the conversation's own calls are answered)` };
  }
}
