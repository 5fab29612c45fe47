import type { Json } from '../../../core/records.ts';
import type { AceLanguage } from '../record.ts';
import { BASE_METHODS, BaseApi } from './base-api.ts';
import { param, type Args, type MethodSpec, type SandboxClassName } from './sandbox.ts';

export interface Reminder { reminder_id: number; title: string; description: string; time: string; notified: boolean }

const TEXT = {
  en: {
    viewLoggedOut: 'The device is not logged in, so you cannot view notifications',
    noTitle: (title: string) => `No reminder found with the title '${title}'.`,
    addLoggedOut: 'Device not logged in. Unable to add a new reminder.',
    full: 'Reminder capacity is full. Unable to add a new reminder.',
    added: (title: string) => `Reminder '${title}' was successfully added.`,
    deleteLoggedOut: 'Device not logged in. Unable to delete the specified reminder.',
    noId: 'Reminder ID does not exist.',
    deleted: (id: number) => `Reminder ID ${id} was successfully deleted.`,
    none: 'No reminders found.',
    notified: (id: number) => `Reminder ID ${id} has been marked as notified.`,
    noKeyword: 'No reminders found containing the keyword.',
  },
  zh: {
    viewLoggedOut: 'device未登录，无法查看提醒',
    noTitle: (title: string) => `没有找到标题为 '${title}' 的提醒`,
    addLoggedOut: 'device未登录，无法添加一个新的提醒',
    full: '提醒容量已满，无法添加新的提醒',
    added: (title: string) => `提醒 '${title}' 已成功添加`,
    deleteLoggedOut: 'device未登录，无法删除指定的提醒',
    noId: '提醒ID不存在',
    deleted: (id: number) => `提醒ID ${id} 已成功删除`,
    none: '没有任何提醒',
    notified: (id: number) => `提醒ID ${id} 已标记为已通知`,
    noKeyword: '没有找到包含该关键词的提醒',
  },
};

const TODO = {
  en: 'First, help Frank place a food delivery order at "Hema Fresh," ordering two "Fresh Gift Packs." Then, send a message to Frank saying, "The price of the purchased goods is () yuan." Replace the parentheses with the actual amount, keeping one decimal place.',
  zh: '首先帮Frank在"盒马生鲜"点外卖，需要定两个"生鲜大礼包"，再发短信告诉Frank："购买商品的价格是()元"。要把括号换成实际金额，保留一位小数。',
};

function defaultReminders(language: AceLanguage): [number, Reminder][] {
  return [
    [1, { reminder_id: 1001, title: "Doctor's Appointment", description: 'Visit Dr. Smith for a checkup.', time: '2024-07-15 09:30', notified: false }],
    [2, { reminder_id: 1002, title: 'Team Meeting', description: 'Monthly project review with the team.', time: '2024-07-17 11:00', notified: false }],
    [3, { reminder_id: 1003, title: 'To-do list', description: TODO[language], time: '2024-07-16 11:00', notified: false }],
  ];
}

const reminderId = (en: string, zh: string) => param('integer', en, zh);

const COMMON: readonly MethodSpec[] = [
  ...BASE_METHODS,
  {
    name: 'view_reminder_by_title',
    description: { en: 'View a specific reminder by its title.', zh: '根据提醒的标题查看特定的提醒。' },
    params: { title: param('string', 'The title of the reminder to search for.', '要搜索的提醒标题。') },
  },
  {
    name: 'add_reminder',
    description: { en: 'Add a new reminder.', zh: '添加新的提醒。' },
    params: {
      title: param('string', 'The title of the reminder.', '提醒的标题。'),
      description: param('string', 'The description of the reminder.', '提醒的描述。'),
      time: param('string', 'The time of the reminder, in the format YYYY-MM-DD HH:MM.', '提醒的时间，格式为 YYYY-MM-DD HH:MM。'),
    },
  },
  {
    name: 'delete_reminder',
    description: { en: 'Delete a reminder by its ID.', zh: '根据ID删除提醒。' },
    params: { reminder_id: reminderId('The ID of the reminder to delete.', '要删除的提醒ID。') },
  },
  { name: 'view_all_reminders', description: { en: 'View all reminders.', zh: '查看所有的提醒。' }, params: {} },
];

/** The zh release has two methods the en one lacks (the en records still offer search_reminders). */
const ZH_ONLY: readonly MethodSpec[] = [
  {
    name: 'mark_as_notified',
    description: { en: 'Mark a reminder as notified.', zh: '标记提醒为已通知。' },
    params: { reminder_id: reminderId('The ID of the reminder to mark as notified.', '要标记为已通知的提醒ID。') },
  },
  {
    name: 'search_reminders',
    description: { en: 'Search reminders by a keyword.', zh: '根据关键词搜索提醒。' },
    params: { keyword: param('string', 'The keyword to search for in the reminder title or description.', '要在提醒标题或描述中搜索的关键字。') },
  },
];

export const REMINDER_METHODS: Record<AceLanguage, readonly MethodSpec[]> = { en: COMMON, zh: [...COMMON, ...ZH_ONLY] };

/**
 * Reminders (ACEBench's ReminderApi; some released answers spell its state 'ReminderAPI'): at
 * most six, keyed by position id; adding, viewing and deleting need the device logged in.
 */
export class ReminderApi extends BaseApi {
  readonly className: SandboxClassName = 'ReminderApi';
  readonly savedAttributes: readonly string[] = ['reminder_list'];
  max_capacity = 6;
  reminder_list: Map<number, Reminder>;
  reminder_id_counter = 3;

  constructor(language: AceLanguage) {
    super(language);
    this.reminder_list = new Map(defaultReminders(language));
  }

  methods(): readonly MethodSpec[] {
    return REMINDER_METHODS[this.language];
  }

  protected loadableAttributes(): readonly string[] {
    return ['max_capacity', 'reminder_list', 'reminder_id_counter'];
  }

  private get text() {
    return TEXT[this.language];
  }

  /** The first reminder with exactly this title. */
  view_reminder_by_title({ title }: Args): Json {
    if (!this.logged_in) return { status: false, message: this.text.viewLoggedOut };
    for (const reminder of this.reminder_list.values()) if (reminder.title === title) return { status: true, reminder: { ...reminder } };
    return { status: false, message: this.text.noTitle(title as string) };
  }

  /** Adds a reminder under the next id; fails when logged out or at capacity. */
  add_reminder({ title, description, time }: Args): Json {
    if (!this.logged_in) return { status: false, message: this.text.addLoggedOut };
    if (this.reminder_list.size >= this.max_capacity) return { status: false, message: this.text.full };
    const id = ++this.reminder_id_counter;
    this.reminder_list.set(id, { reminder_id: id, title: title as string, description: description as string, time: time as string, notified: false });
    return { status: true, message: this.text.added(title as string) };
  }

  /** Deletes by position id (the key of reminder_list, not reminder_id). */
  delete_reminder({ reminder_id }: Args): Json {
    if (!this.logged_in) return { status: false, message: this.text.deleteLoggedOut };
    const id = reminder_id as number;
    if (!this.reminder_list.has(id)) return { status: false, message: this.text.noId };
    this.reminder_list.delete(id);
    return { status: true, message: this.text.deleted(id) };
  }

  view_all_reminders(): Json {
    if (!this.reminder_list.size) return { status: false, message: this.text.none };
    const reminders = [...this.reminder_list.values()].map(({ title, description, time, notified }) => ({ title, description, time, notified }));
    return { status: true, reminders };
  }

  /** (zh) Marks a reminder as notified. */
  mark_as_notified({ reminder_id }: Args): Json {
    const reminder = this.reminder_list.get(reminder_id as number);
    if (!reminder) return { status: false, message: this.text.noId };
    reminder.notified = true;
    return { status: true, message: this.text.notified(reminder_id as number) };
  }

  /**
   * (zh) Reminders whose title or description holds the keyword. As released, a match fails:
   * the code formats the time with strftime, but times are stored as text.
   */
  search_reminders({ keyword }: Args): Json {
    const needle = (keyword as string).toLowerCase();
    for (const reminder of this.reminder_list.values()) {
      if (reminder.title.toLowerCase().includes(needle) || reminder.description.toLowerCase().includes(needle)) {
        return "Error during execution: 'str' object has no attribute 'strftime'";
      }
    }
    return { status: false, message: this.text.noKeyword };
  }
}
