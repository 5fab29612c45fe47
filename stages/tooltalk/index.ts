/** ToolTalk's simulated tools: world, tools, tool docs, comparators and the replay of released conversations. */
export { DEFAULT_DATABASES_DIR, loadDatabases, parseDatabase, applyOverlay, databasesToJson, type DatabasesJson } from './databases.ts';
export { createWorld, ToolTalkWorld, bindArguments, type ConversationStart, type ToolRequest, type ToolResult, type WorldOptions } from './world.ts';
export { TOOLTALK_TOOLS, TOOLS_BY_NAME } from './tools/index.ts';
export { toolSpecOf, toolTalkSpecs } from './specs.ts';
export { createComparator, ToolTalkComparator, DEFAULT_TEXT_THRESHOLDS, type CallRecord, type ComparatorOptions, type Comparison } from './comparators.ts';
export { replayReleased, type ReplayMismatch, type ReplayOptions, type ReplayReport, type ReleasedConversation } from './replay.ts';
export { DATABASE_NAMES, type Databases, type DatabaseName, type JsonObject, type SimTool, type ParamDoc } from './tool.ts';
