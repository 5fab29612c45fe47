import { PyException, hex } from '../python.ts';
import { userOf, type Args, type SimTool } from '../tool.ts';
import { searchParameters, searchRecords } from './search.ts';

// ToolTalk's Messages suite (src/tooltalk/apis/message.py).

const PLUGIN = 'Messages';

export const SearchMessages: SimTool = {
  name: 'SearchMessages',
  plugin: PLUGIN,
  description: 'Searches messages matching filters returning 5 most recent results.',
  parameters: searchParameters('Username of the sender.'),
  output: {
    messages: {
      type: 'array',
      item: {
        type: 'object',
        properties: { message_id: { type: 'string' }, timestamp: { type: 'string' }, sender: { type: 'string' }, message: { type: 'string' } },
      },
      description: 'list of messages matching search criteria.',
    },
  },
  isAction: false,
  requiresAuth: true,
  defaults: { match_type: 'any' },
  call(ctx, args: Args) {
    const username = userOf(ctx, args.session_token).username as string;
    const messages = ctx.databases.Message.get(username);
    if (!messages) return { messages: [] };
    return { messages: searchRecords(ctx, messages.values(), args, { date: 'timestamp', text: ['message'] }) };
  },
};

export const SendMessage: SimTool = {
  name: 'SendMessage',
  plugin: PLUGIN,
  description: 'Sends a message to another user.',
  parameters: {
    receiver: { type: 'string', description: "The receiver's username.", required: true },
    message: { type: 'string', description: 'The message.', required: true },
  },
  output: { message_id: { type: 'string', description: 'message_id on success.' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token, message }: Args) {
    userOf(ctx, session_token);
    // Any receiver is accepted (it could resolve); sent messages are not stored.
    if (message === '') throw new PyException('Message cannot be empty.');
    return { message_id: `${hex(ctx.random.randint(0, 0xffffffff), 8)}-${hex(ctx.random.randint(0, 0xffffffff), 8)}` };
  },
};

export const MESSAGE_TOOLS: readonly SimTool[] = [SendMessage, SearchMessages];
