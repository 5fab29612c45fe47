import type { Json } from '../../../core/records.ts';
import type { AceLanguage } from '../record.ts';
import { BASE_METHODS, BaseApi } from './base-api.ts';
import { param, type Args, type MethodSpec, type SandboxClassName } from './sandbox.ts';

export interface MessageUser { user_id: string; phone_number: string; occupation: string }
export interface InboxMessage { sender_id: string; receiver_id: string; message: string; time?: string }

const TEXT = {
  en: {
    sendLoggedOut: 'Device not logged in, unable to send message',
    sendWifiOff: 'Wi-Fi is turned off, cannot send messages at this time',
    inboxFull: 'Inbox capacity is full. You need to ask the user which message to delete.',
    noSenderOrReceiver: 'Sender or receiver does not exist',
    sent: (receiver: string) => `Message successfully sent to ${receiver}.`,
    deleteLoggedOut: 'Device not logged in, unable to delete message',
    noMessageId: 'Message ID does not exist',
    deleted: (id: number) => `Message ID ${id} has been successfully deleted.`,
    viewLoggedOut: 'Device not logged in, unable to view message information',
    noSender: 'Sender does not exist',
    noReceiver: 'Receiver does not exist',
    noRecords: 'No related message records found',
    noUser: 'User does not exist',
    noKeyword: 'No messages found containing the keyword',
    timesLoggedOut: 'Device not logged in, unable to retrieve all message times and their corresponding message IDs.',
    latestLoggedOut: 'Device not logged in, unable to retrieve the latest sent message ID.',
    earliestLoggedOut: 'Device not logged in, unable to retrieve the earliest sent message ID.',
    empty: 'No message records found',
    latest: (id: number) => `The latest message ID is ${id}`,
    earliest: (id: number) => `The earliest message ID is ${id}`,
  },
  zh: {
    sendLoggedOut: 'device未登录，无法发送短信',
    sendWifiOff: 'wifi关闭，此时不能发送信息',
    inboxFull: '内存容量不够了，你需要询问user删除哪一条短信。',
    noSenderOrReceiver: '发送者或接收者不存在',
    sent: (receiver: string) => `短信成功发送给${receiver}。`,
    deleteLoggedOut: 'device未登录，无法删除短信',
    noMessageId: '短信ID不存在',
    deleted: (id: number) => `短信ID ${id} 已成功删除。`,
    viewLoggedOut: 'device未登录，无法查看短信信息',
    noSender: '发送者不存在',
    noReceiver: '接收者不存在',
    noRecords: '没有找到相关的短信记录',
    noUser: '用户不存在',
    noKeyword: '没有找到包含关键词的短信',
    timesLoggedOut: 'device未登录，获取所有短信的时间以及对应的短信编号。',
    latestLoggedOut: 'device未登录，无法获取最新发送的短信ID。',
    earliestLoggedOut: 'device未登录，无法获取最早发送的短信ID',
    empty: '短信记录为空',
    latest: (id: number) => `最新的短信ID是 ${id}`,
    earliest: (id: number) => `最早的短信ID是 ${id}`,
  },
};

const USERS: Record<string, MessageUser> = {
  Eve: { user_id: 'USR100', phone_number: '123-456-7890', occupation: 'Software Engineer' },
  Frank: { user_id: 'USR101', phone_number: '234-567-8901', occupation: 'Data Scientist' },
  Grace: { user_id: 'USR102', phone_number: '345-678-9012', occupation: 'Product Manager' },
  Helen: { user_id: 'USR103', phone_number: '456-789-0123', occupation: 'UX Designer' },
  Isaac: { user_id: 'USR104', phone_number: '567-890-1234', occupation: 'DevOps Engineer' },
  Jack: { user_id: 'USR105', phone_number: '678-901-2345', occupation: 'Marketing Specialist' },
};

/** The released inbox: message 1 goes with the reminder tasks, 2 and 3 with the food platform. */
function defaultInbox(language: AceLanguage): [number, InboxMessage][] {
  const localised = {
    en: [
      'Can you help me order a "Margherita Pizza" delivery? The merchant is Domino\'s.',
      'Please check the milk tea delivery options available from Heytea and purchase a cheaper milk tea for me. After making the purchase, remember to reply to me with "Already bought."',
    ],
    zh: ['你能帮我点一个"玛格丽特披萨"的外卖吗,商家是达美乐。', '帮我查一些喜茶有哪些奶茶外卖，买一杯便宜些的奶茶。买完以后记得回复我,回复的内容是（已经买好了）'],
  }[language];
  return [
    [1, { sender_id: 'USR100', receiver_id: 'USR101', message: "Hey Frank, don't forget about our meeting on 2024-06-11 at 4 PM in Conference Room 1.", time: '2024-06-09' }],
    [2, { sender_id: 'USR101', receiver_id: 'USR102', message: localised[0], time: '2024-03-09' }],
    [3, { sender_id: 'USR102', receiver_id: 'USR103', message: localised[1], time: '2023-12-05' }],
    [4, { sender_id: 'USR103', receiver_id: 'USR102', message: 'No problem Helen, I can assist you.', time: '2024-09-09' }],
    [5, { sender_id: 'USR104', receiver_id: 'USR105', message: 'Isaac, are you available for a call?', time: '2024-06-06' }],
    [6, { sender_id: 'USR105', receiver_id: 'USR104', message: "Yes Jack, let's do it in 30 minutes.", time: '2024-01-15' }],
  ];
}

const name = (en: string, zh: string) => param('string', en, zh);

export const MESSAGE_METHODS: readonly MethodSpec[] = [
  ...BASE_METHODS,
  {
    name: 'send_message',
    description: { en: 'Send a message from one user to another.', zh: '从一个用户向另一个用户发送消息。' },
    params: {
      sender_name: name('The name of the user sending the message.', '发送消息的用户姓名。'),
      receiver_name: name('The name of the user receiving the message.', '接收消息的用户姓名。'),
      message: param('string', 'The content of the message to be sent.', '要发送的消息内容。'),
    },
  },
  {
    name: 'delete_message',
    description: { en: 'Delete a message based on its message ID.', zh: '根据消息ID删除消息。' },
    params: { message_id: param('integer', 'The ID of the message to be deleted.', '要删除的消息的 ID。') },
  },
  {
    name: 'view_messages_between_users',
    description: { en: 'Get all the messages sent from one user to another.', zh: '获取一个用户发送给另一个用户的所有消息。' },
    params: {
      sender_name: name('The name of the user sending the messages.', '发送消息的用户姓名。'),
      receiver_name: name('The name of the user receiving the messages.', '接收消息的用户姓名。'),
    },
  },
  {
    name: 'search_messages',
    description: { en: 'Search for messages from a specific user that contain a particular keyword.', zh: '搜索特定用户包含某个关键字的消息。' },
    params: {
      user_name: name('The name of the user whose messages are being searched.', '要搜索消息的用户姓名。'),
      keyword: param('string', 'The keyword to search for within the messages.', '要在消息中搜索的关键字。'),
    },
  },
  {
    name: 'get_all_message_times_with_ids',
    description: { en: 'Get the time of every message together with its message ID.', zh: '获取所有短信的时间以及对应的短信ID。' },
    params: {},
  },
  { name: 'get_latest_message_id', description: { en: 'Get the ID of the most recently sent message.', zh: '获取最近发送的消息的ID。' }, params: {} },
  { name: 'get_earliest_message_id', description: { en: 'Get the ID of the earliest sent message.', zh: '获取最早发送的消息的ID。' }, params: {} },
];

/**
 * Text messages between six users (ACEBench's MessageApi): an inbox of at most six messages keyed
 * by id, sending needs the device logged in and Wi-Fi on.
 */
export class MessageApi extends BaseApi {
  readonly className: SandboxClassName = 'MessageApi';
  readonly savedAttributes: readonly string[] = ['inbox'];
  max_capacity = 6;
  user_list: Record<string, MessageUser> = structuredClone(USERS);
  inbox: Map<number, InboxMessage>;
  message_id_counter = 6;

  constructor(language: AceLanguage) {
    super(language);
    this.inbox = new Map(defaultInbox(language));
  }

  methods(): readonly MethodSpec[] {
    return MESSAGE_METHODS;
  }

  protected loadableAttributes(): readonly string[] {
    return ['max_capacity', 'user_list', 'inbox', 'message_id_counter'];
  }

  private get text() {
    return TEXT[this.language];
  }

  /** Sends a message; fails when logged out, Wi-Fi off, the inbox full, or a user unknown. */
  send_message({ sender_name, receiver_name, message }: Args): Json {
    if (!this.logged_in) return { status: false, message: this.text.sendLoggedOut };
    if (!this.wifi) return { status: false, message: this.text.sendWifiOff };
    if (this.inbox.size >= this.max_capacity) return { status: false, message: this.text.inboxFull };
    if (!Object.hasOwn(this.user_list, sender_name as string) || !Object.hasOwn(this.user_list, receiver_name as string)) {
      return { status: false, message: this.text.noSenderOrReceiver };
    }
    const sender_id = this.user_list[sender_name as string].user_id;
    const receiver_id = this.user_list[receiver_name as string].user_id;
    this.message_id_counter++;
    // As released: a sent message has no time.
    this.inbox.set(this.message_id_counter, { sender_id, receiver_id, message: message as string });
    return { status: true, message: this.text.sent(receiver_name as string) };
  }

  /** Deletes a message by id; fails when logged out or the id is unknown. */
  delete_message({ message_id }: Args): Json {
    if (!this.logged_in) return { status: false, message: this.text.deleteLoggedOut };
    const id = message_id as number;
    if (!this.inbox.has(id)) return { status: false, message: this.text.noMessageId };
    this.inbox.delete(id);
    return { status: true, message: this.text.deleted(id) };
  }

  /** The messages sent from one user to another, in inbox order. */
  view_messages_between_users({ sender_name, receiver_name }: Args): Json {
    if (!this.logged_in) return { status: false, message: this.text.viewLoggedOut };
    if (!Object.hasOwn(this.user_list, sender_name as string)) return { status: false, message: this.text.noSender };
    if (!Object.hasOwn(this.user_list, receiver_name as string)) return { status: false, message: this.text.noReceiver };
    const senderId = this.user_list[sender_name as string].user_id;
    const receiverId = this.user_list[receiver_name as string].user_id;
    const messages: Json[] = [];
    for (const [id, data] of this.inbox) {
      if (data.sender_id === senderId && data.receiver_id === receiverId) messages.push({ id, sender: sender_name, receiver: receiver_name, message: data.message });
    }
    if (!messages.length) return { status: false, message: this.text.noRecords };
    return { status: true, messages };
  }

  /** A user's sent and received messages containing the keyword (case-insensitive). */
  search_messages({ user_name, keyword }: Args): Json {
    if (!Object.hasOwn(this.user_list, user_name as string)) return { status: false, message: this.text.noUser };
    const userId = this.user_list[user_name as string].user_id;
    const needle = (keyword as string).toLowerCase();
    const messages: Json[] = [];
    for (const [id, data] of this.inbox) {
      if ((data.sender_id === userId || data.receiver_id === userId) && data.message.toLowerCase().includes(needle)) {
        messages.push({ id, sender_id: data.sender_id, receiver_id: data.receiver_id, message: data.message });
      }
    }
    if (!messages.length) return { status: false, message: this.text.noKeyword };
    return { status: true, messages };
  }

  /** `{id: time}` for every message (a sent message, having no time, fails as released). */
  get_all_message_times_with_ids(): Json {
    if (!this.logged_in) return { status: false, message: this.text.timesLoggedOut };
    const out: Record<string, Json> = {};
    for (const [id, data] of this.inbox) {
      if (data.time === undefined) return "Error during execution: 'time'";
      out[String(id)] = data.time;
    }
    return out;
  }

  get_latest_message_id(): Json {
    return this.extremeMessage(this.text.latestLoggedOut, (a, b) => a > b, this.text.latest);
  }

  get_earliest_message_id(): Json {
    return this.extremeMessage(this.text.earliestLoggedOut, (a, b) => a < b, this.text.earliest);
  }

  /**
   * The message whose date beats every other's (the first one on a tie). A message without a
   * time (one sent in the session) fails the way ACEBench's harness reports Python's KeyError.
   */
  private extremeMessage(loggedOut: string, beats: (a: string, b: string) => boolean, say: (id: number) => string): Json {
    if (!this.logged_in) return { status: false, message: loggedOut };
    if (!this.inbox.size) return { status: false, message: this.text.empty };
    let bestId = 0;
    let bestTime: string | null = null;
    for (const [id, data] of this.inbox) {
      if (data.time === undefined) return "Error during execution: 'time'";
      // YYYY-MM-DD compares as text the way the parsed dates compare.
      if (bestTime === null || beats(data.time, bestTime)) {
        bestTime = data.time;
        bestId = id;
      }
    }
    return { status: true, message: say(bestId), message_id: bestId };
  }
}
