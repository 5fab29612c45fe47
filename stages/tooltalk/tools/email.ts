import type { Json } from '../../../core/records.ts';
import { PyException, hex, pyStr, pyTypeName } from '../python.ts';
import { isEmail, userOf, type Args, type SimTool } from '../tool.ts';
import { searchParameters, searchRecords } from './search.ts';

// ToolTalk's Email suite (src/tooltalk/apis/email.py).

const PLUGIN = 'Email';

/** Python's iteration of `to`: a str yields its characters. */
function iterate(value: Json): Json[] {
  if (typeof value === 'string') return [...value];
  if (Array.isArray(value)) return value;
  if (value !== null && typeof value === 'object') return Object.keys(value);
  throw new PyException(`'${pyTypeName(value)}' object is not iterable`);
}

export const SearchInbox: SimTool = {
  name: 'SearchInbox',
  plugin: PLUGIN,
  description: 'Searches for emails matching filters returning 5 most recent results.',
  parameters: searchParameters('The email address of the sender.'),
  output: {
    emails: {
      type: 'array',
      item: {
        type: 'object',
        properties: {
          sender: { type: 'string', description: 'The sender of the email.' },
          receivers: { type: 'array', item: { type: 'string' }, description: 'The receivers of the email.' },
          subject: { type: 'string', description: 'The subject of the email.' },
          body: { type: 'string', description: 'The body of the email.' },
          date: { type: 'string', description: 'The date of the email.' },
        },
      },
      description: 'List of emails matching search criteria.',
    },
  },
  isAction: false,
  requiresAuth: true,
  defaults: { match_type: 'any' },
  call(ctx, args: Args) {
    const username = userOf(ctx, args.session_token).username as string;
    const emails = ctx.databases.Email.get(username);
    // An empty inbox answers before the arguments are checked, as in ToolTalk.
    if (!emails || emails.size === 0) return { emails: [] };
    return { emails: searchRecords(ctx, emails.values(), args, { date: 'date', text: ['body', 'subject'] }) };
  },
};

export const SendEmail: SimTool = {
  name: 'SendEmail',
  plugin: PLUGIN,
  description: 'Sends an email on behalf of a given user.',
  parameters: {
    to: { type: 'array', items: { type: 'string' }, description: 'Receiving addresses of the email.', required: true },
    subject: { type: 'string', description: 'The subject of the email.', required: true },
    body: { type: 'string', description: 'The content of the email.', required: true },
  },
  output: { email_id: { type: 'string', description: 'email_id on success' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token, to }: Args) {
    userOf(ctx, session_token);
    for (const address of iterate(to)) {
      if (!isEmail(address)) throw new PyException(`${pyStr(address)} is not a valid email address.`);
    }
    // Sent mail is not stored: ToolTalk's SendEmail has no database.
    return { email_id: `${hex(ctx.random.randint(0, 0xff), 2)}-${hex(ctx.random.randint(0, 0xffff), 4)}-${hex(ctx.random.randint(0, 0xffffffff), 8)}` };
  },
};

export const EMAIL_TOOLS: readonly SimTool[] = [SendEmail, SearchInbox];
