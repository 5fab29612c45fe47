import { UserError } from '../../../core/errors.ts';
import type { Json } from '../../../core/records.ts';
import type { Rng } from '../../../core/rng.ts';
import type { AceLanguage, AceRecord } from '../record.ts';
import { SandboxSession } from './execute.ts';
import { defaultMarket } from './finance.ts';
import { defaultMerchants } from './food-platform.ts';
import { renderCallString, pyFloat, type StructuredCall } from './python-call.ts';
import type { SandboxClassName } from './sandbox.ts';
import { FREE_BAGS, type Flight } from './travel.ts';

/**
 * Offline generator of ACEBench agent tasks over the sandboxes. A task is built by running it:
 * each gold call executes in a live session as it is chosen (a message id to delete is the one
 * get_latest_message_id returned), then the whole rendered mile_stone is replayed from the
 * initial_config in a fresh session and the ground_truth is that session's final state.
 */

export const TASK_FAMILIES = ['message', 'reminder', 'food', 'travel', 'finance'] as const;
export type TaskFamily = (typeof TASK_FAMILIES)[number];
export type AgentCategory = 'agent_multi_step' | 'agent_multi_turn';

export interface AgentTaskOptions {
  rng: Rng;
  /** Phone families (message, reminder, food) combine freely; travel stands alone; finance alone or with message. */
  families: readonly TaskFamily[];
  language: AceLanguage;
  category: AgentCategory;
  /** The record's number in its file: the id is `<category>_<index>`. */
  index: number;
}

export interface AgentTask {
  record: AceRecord;
  /** The gold path: one step per mile_stone entry, each one or more calls. */
  calls: StructuredCall[][];
}

const PEOPLE = ['Eve', 'Frank', 'Grace', 'Helen', 'Isaac', 'Jack'];
const FOOD_PASSWORDS: Record<string, string> = { Eve: 'password123', Frank: 'password456', Grace: 'password789', Helen: 'password321', Isaac: 'password654', Jack: 'password654' };
const TRAVEL_USERS: Record<string, [string, string]> = { user1: ['Eve', 'password123'], user2: ['Frank', 'password456'], user3: ['Grace', 'password789'] };

const TEXT = {
  en: {
    iAm: (name: string, login: string) => `I am ${name}${login}. `,
    youAre: (name: string, login: string) => `You are ${name}${login}. `,
    foodLogin: (name: string) => ` (username: ${name}, password: ${FOOD_PASSWORDS[name]})`,
    order: (quantity: number, product: string, merchant: string) => `order ${quantity} "${product}" from ${merchant} on the food platform`,
    tellCost: (receiver: string) => `send a text message to ${receiver} with the content "The total cost is () yuan." (replace the parentheses with the amount, keeping one decimal place)`,
    costMessage: (total: number) => `The total cost is ${pyFloat(total)} yuan.`,
    recordCost: (title: string, time: string) => `record the spending in a reminder titled "${title}" with the description "Spent () yuan" (the amount, one decimal place) at ${time}`,
    costDescription: (total: number) => `Spent ${pyFloat(total)} yuan`,
    spending: "Today's spending",
    send: (receiver: string, content: string) => `send a text message to ${receiver} with the content "${content}"`,
    remind: (title: string, description: string, time: string) => `add a reminder titled "${title}" with the description "${description}" at ${time}`,
    deleteRule: (latest: boolean) => ` (If the message capacity is full, delete the ${latest ? 'most recent' : 'earliest'} message.)`,
    personaRule: (latest: boolean) => ` If a message needs to be deleted, you generally delete the ${latest ? 'most recent' : 'oldest'} message.`,
    need: 'I need to ',
    want: 'You want to ',
    then: ', then ',
    end: '.',
    persona: ' You will respond to the agent but will not proactively provide any unsolicited information.',
    contents: ['See you tomorrow', "Don't forget the meeting this afternoon", 'The package has arrived', 'Are you free for lunch tomorrow?'],
    reminders: [['Dentist', 'Check-up at the dental clinic.'], ['Gym', 'Leg day with the trainer.'], ['Call Mom', 'Weekly call home.']],
    travelLogin: (id: string, password: string) => ` (user ID: ${id}, password: '${password}')`,
    book: (origin: string, destination: string, cabin: string, method: string, bags: number) =>
      `book the ${cabin.toLowerCase()} flight from ${origin} to ${destination} with the lowest fare (the earliest one if several), paying by ${method}, with ${bags} piece(s) of checked luggage`,
    cancel: (id: string, reason: string) => `cancel reservation ${id}; the reason is "${reason}"`,
    reasons: ['Change of plans.', 'The airline has canceled the flight.'],
    financeLogin: (name: string, password: string) => ` (finance app account: ${name}, password: ${password})`,
    transfer: (amount: number, receiver: string) => `transfer ${pyFloat(amount)} yuan to ${receiver}`,
    buy: (quantity: number, code: string) => `buy ${quantity} shares of ${code}`,
    pay: (bill: string, amount: number) => `pay my ${bill} bill of ${pyFloat(amount)} yuan`,
    payYour: (bill: string, amount: number) => `pay your ${bill} bill of ${pyFloat(amount)} yuan`,
    bills: ['electricity', 'water', 'phone'],
    transferNote: (amount: number) => `I have transferred ${pyFloat(amount)} yuan to you.`,
  },
  zh: {
    iAm: (name: string, login: string) => `我是${name}${login}，`,
    youAre: (name: string, login: string) => `你是${name}${login}，`,
    foodLogin: (name: string) => `（账号 ${name}，密码 ${FOOD_PASSWORDS[name]}）`,
    order: (quantity: number, product: string, merchant: string) => `在外卖平台上从${merchant}点${quantity}份“${product}”`,
    tellCost: (receiver: string) => `给${receiver}发一条短信，内容是“总共花费()元”（括号换成实际金额，保留一位小数）`,
    costMessage: (total: number) => `总共花费${pyFloat(total)}元`,
    recordCost: (title: string, time: string) => `把花费记在提醒中，标题为“${title}”，描述为“花费()元”（实际金额，保留一位小数），时间为${time}`,
    costDescription: (total: number) => `花费${pyFloat(total)}元`,
    spending: '今日花费',
    send: (receiver: string, content: string) => `给${receiver}发一条短信，内容是“${content}”`,
    remind: (title: string, description: string, time: string) => `添加一个提醒，标题为“${title}”，描述为“${description}”，时间为${time}`,
    deleteRule: (latest: boolean) => `(如果短信容量已满，删除${latest ? '最新' : '最早'}的短信)`,
    personaRule: (latest: boolean) => `如果需要删除短信，一般删除${latest ? '离现在时间最近' : '离现在时间最久'}的短信。`,
    need: '我需要',
    want: '你想',
    then: '，然后',
    end: '。',
    persona: '你会对agent做出反应，但不会主动提供任何未被询问的信息。',
    contents: ['明天见', '不要忘了下午的会议', '快递已经到了', '明天有空一起吃午饭吗？'],
    reminders: [['看牙', '去牙科诊所检查。'], ['健身', '和教练练腿。'], ['给妈妈打电话', '每周给家里打电话。']],
    travelLogin: (id: string, password: string) => `(用户id为${id} password为“${password}”)`,
    book: (origin: string, destination: string, cabin: string, method: string, bags: number) =>
      `预订从${origin}到${destination}票价最低的${cabin}航班（票价相同时选最早的一班），支付方式为${method}，托运行李${bags}件`,
    cancel: (id: string, reason: string) => `取消预订${id}，取消原因是“${reason}”`,
    reasons: ['计划变更', '航空公司取消航班'],
    financeLogin: (name: string, password: string) => `（理财账号 ${name}，密码 ${password}）`,
    transfer: (amount: number, receiver: string) => `给${receiver}转账${pyFloat(amount)}元`,
    buy: (quantity: number, code: string) => `买入${quantity}股${code}`,
    pay: (bill: string, amount: number) => `缴纳${pyFloat(amount)}元的${bill}账单`,
    payYour: (bill: string, amount: number) => `缴纳${pyFloat(amount)}元的${bill}账单`,
    bills: ['电费', '水费', '话费'],
    transferNote: (amount: number) => `我已经给你转了${pyFloat(amount)}元。`,
  },
};

type Text = (typeof TEXT)['en'];

/** The task being built: the live session, the gold steps, and the clauses of the question. */
class Draft {
  readonly steps: StructuredCall[][] = [];
  readonly clauses: string[] = [];
  readonly personaClauses: string[] = [];
  login = '';
  deleteLatest: boolean | null = null;
  readonly session: SandboxSession;

  constructor(readonly rng: Rng, readonly language: AceLanguage, readonly classes: SandboxClassName[], readonly initialConfig: Record<string, Json>) {
    this.session = new SandboxSession({ initialConfig, involvedClasses: classes, language, where: 'generated initial_config' });
  }

  get text(): Text {
    return TEXT[this.language] as Text;
  }

  /**
   * Runs one gold call; a call the sandbox refuses or fails is a generator bug. Failure is a
   * `status: false` result, or for Travel (which answers in text) a text `succeeded` rejects.
   */
  call(name: string, args: Record<string, Json> = {}, succeeded: (result: Json) => boolean = () => true): Json {
    const call = { name, arguments: args };
    const [outcome] = this.session.execute(call);
    const result = outcome.result ?? null;
    const failed = !outcome.ok || !succeeded(result) || (result !== null && typeof result === 'object' && !Array.isArray(result) && result.status === false);
    if (failed) throw new Error(`task generator: gold call ${outcome.call} failed: ${outcome.error ?? JSON.stringify(result)}`);
    this.steps.push([call]);
    return result ?? null;
  }

  base(): { wifi: boolean; logged_in: boolean } {
    return this.session.state().BaseApi as { wifi: boolean; logged_in: boolean };
  }

  ensureDevice(): void {
    if (!this.base().logged_in) this.call('login_device');
  }

  ensureWifi(): void {
    if (!this.base().wifi) this.call('turn_on_wifi');
  }

  say(clause: string, persona = clause): void {
    this.clauses.push(clause);
    this.personaClauses.push(persona);
  }
}

function orderFood(draft: Draft, user: string): number {
  const merchants = defaultMerchants(draft.language);
  const balance = (draft.session.state().FoodPlatform.users as Record<string, { balance: number }>)[user].balance;
  const options = Object.entries(merchants).flatMap(([merchant, { menu }]) =>
    menu.flatMap(({ product, price }) => [1, 2, 3].filter((q) => price * q < balance).map((quantity) => ({ merchant, product, quantity, total: price * quantity }))),
  );
  const choice = draft.rng.pick(options);
  draft.ensureWifi();
  draft.call('login_food_platform', { username: user, password: FOOD_PASSWORDS[user] });
  draft.call('add_food_delivery_order', { username: user, merchant_name: choice.merchant, items: [{ product: choice.product, quantity: choice.quantity }] });
  draft.say(draft.text.order(choice.quantity, choice.product, choice.merchant));
  return choice.total;
}

/** Sends a message, first deleting the latest or earliest one when the inbox is full. */
function sendMessage(draft: Draft, sender: string, receiver: string, content: string, clause: string): void {
  draft.ensureDevice();
  draft.ensureWifi();
  const inbox = draft.session.state().MessageApi.inbox as Record<string, Json>;
  if (Object.keys(inbox).length >= 6) {
    draft.deleteLatest ??= draft.rng.chance(0.5);
    const found = draft.call(draft.deleteLatest ? 'get_latest_message_id' : 'get_earliest_message_id') as { message_id: number };
    draft.call('delete_message', { message_id: found.message_id });
  }
  draft.call('send_message', { sender_name: sender, receiver_name: receiver, message: content });
  draft.say(clause);
}

function addReminder(draft: Draft, title: string, description: string, time: string, clause: string): void {
  draft.ensureDevice();
  draft.call('add_reminder', { title, description, time });
  draft.say(clause);
}

function randomTime(rng: Rng): string {
  return `2024-07-${String(rng.int(15, 28)).padStart(2, '0')} ${String(rng.int(8, 20)).padStart(2, '0')}:${rng.pick(['00', '30'])}`;
}

function phoneTask(draft: Draft, families: Set<TaskFamily>): string {
  const { rng, text } = draft;
  const me = rng.pick(PEOPLE);
  const other = rng.pick(PEOPLE.filter((p) => p !== me));
  if (families.has('food')) {
    draft.login = text.foodLogin(me);
    const total = orderFood(draft, me);
    if (families.has('message')) sendMessage(draft, me, other, text.costMessage(total), text.tellCost(other));
    if (families.has('reminder')) {
      const time = randomTime(rng);
      addReminder(draft, text.spending, text.costDescription(total), time, text.recordCost(text.spending, time));
    }
    return me;
  }
  if (families.has('reminder')) {
    const [title, description] = rng.pick(text.reminders);
    const time = randomTime(rng);
    addReminder(draft, title, description, time, text.remind(title, description, time));
  }
  if (families.has('message')) {
    const content = rng.pick(text.contents);
    sendMessage(draft, me, other, content, text.send(other, content));
  }
  return me;
}

function travelTask(draft: Draft): string {
  const { rng, text } = draft;
  const userId = rng.pick(Object.keys(TRAVEL_USERS));
  const [name, password] = TRAVEL_USERS[userId];
  draft.login = text.travelLogin(userId, password);
  if (rng.chance(0.3)) {
    const found = draft.call('get_reservation_details', { user_id: userId }) as { reservation_id: string; flight_info: Json }[];
    // Released res_4 names a flight that does not exist, so it cannot be cancelled.
    const reservations = found.filter((r) => r.flight_info !== null);
    if (reservations.length) {
      const id = rng.pick(reservations).reservation_id;
      const reason = rng.pick(text.reasons);
      draft.call('cancel_reservation', { user_id: userId, reservation_id: id, reason }, (r) => typeof r === 'string' && /refunded|退款/.test(r));
      draft.say(text.cancel(id, reason));
      return name;
    }
    draft.steps.pop();
  }
  const user = (draft.session.state().Travel.users as Record<string, { bank_balance: number; cash_balance: number; membership_level: string }>)[userId];
  const routes = [['Beijing', 'Shanghai'], ['Shanghai', 'Beijing'], ['Beijing', 'Nanjing'], ['Nanjing', 'Shenzhen']];
  const cities = draft.language === 'en' ? null : { Beijing: '北京', Shanghai: '上海', Nanjing: '南京', Shenzhen: '深圳' } as Record<string, string>;
  const [origin, destination] = rng.pick(routes).map((city) => cities?.[city] ?? city);
  const business = rng.chance(0.4);
  const cabin = business ? (draft.language === 'en' ? 'Business Class' : '商务舱') : draft.language === 'en' ? 'Economy Class' : '经济舱';
  const bags = rng.int(1, 4);
  const fee = Math.max(bags - FREE_BAGS[user.membership_level][business ? 1 : 0], 0) * 50;
  const flights = draft.call('get_flight_details', { origin, destination }) as unknown as Flight[];
  const fare = (f: Flight) => (business ? f.business_price : f.economy_price);
  const cheapest = flights.reduce((best, f) => (fare(f) < fare(best) || (fare(f) === fare(best) && f.depart_time < best.depart_time) ? f : best));
  const method = fare(cheapest) + fee <= user.cash_balance && rng.chance(0.5) ? 'cash' : 'bank';
  const booked = (r: Json) => typeof r === 'string' && /^(Booking successful|预订成功)/.test(r);
  draft.call('reserve_flight', { user_id: userId, password, flight_no: cheapest.flight_no, cabin, payment_method: method, baggage_count: bags }, booked);
  draft.say(text.book(origin, destination, cabin, method, bags));
  return name;
}

function financeTask(draft: Draft, withMessage: boolean): string {
  const { rng, text } = draft;
  const me = rng.pick(PEOPLE);
  const accounts = draft.session.state().Finance.user_accounts as Record<string, { password: string; balance: number }>;
  draft.login = text.financeLogin(me, accounts[me].password);
  draft.call('login_finance', { user_name: me, password: accounts[me].password });
  const balance = accounts[me].balance;
  const action = withMessage ? 'transfer' : rng.pick(['transfer', 'buy', 'pay']);
  if (action === 'transfer') {
    const receiver = rng.pick(PEOPLE.filter((p) => p !== me));
    const amount = rng.int(1, Math.floor(balance / 100)) * 50;
    draft.call('transfer', { sender_name: me, receiver_name: receiver, amount });
    draft.say(text.transfer(amount, receiver));
    if (withMessage) sendMessage(draft, me, receiver, text.transferNote(amount), text.send(receiver, text.transferNote(amount)));
  } else if (action === 'buy') {
    const market = defaultMarket(draft.language);
    const code = rng.pick(Object.keys(market).filter((c) => market[c].price <= balance));
    const quantity = rng.int(1, Math.max(1, Math.min(10, Math.floor(balance / market[code].price))));
    draft.call('buy_stock', { user_name: me, stock_code: code, quantity });
    draft.say(text.buy(quantity, code));
  } else {
    const bill = rng.pick(text.bills);
    const amount = rng.int(50, Math.min(500, balance));
    draft.call('pay_bill', { user_name: me, bill_type: bill, amount });
    draft.say(text.pay(bill, amount), text.payYour(bill, amount));
  }
  return me;
}

/** The involved classes for a family set, in the released order. */
function involvedClasses(families: Set<TaskFamily>): SandboxClassName[] {
  if (families.has('travel')) {
    if (families.size > 1) throw new UserError(`agent task families: travel stands alone (got ${[...families].join(', ')})`);
    return ['Travel'];
  }
  if (families.has('finance')) {
    const others = [...families].filter((f) => f !== 'finance');
    if (others.some((f) => f !== 'message')) throw new UserError(`agent task families: finance combines only with message (got ${[...families].join(', ')})`);
    return others.length ? ['BaseApi', 'MessageApi', 'Finance'] : ['Finance'];
  }
  const order: [TaskFamily, SandboxClassName][] = [['message', 'MessageApi'], ['reminder', 'ReminderApi'], ['food', 'FoodPlatform']];
  return ['BaseApi', ...order.filter(([f]) => families.has(f)).map(([, c]) => c)];
}

/** The question in the released style: an instruction (multi_step) or a simulated-user persona (multi_turn). */
function question(draft: Draft, me: string, category: AgentCategory): string {
  const { text } = draft;
  const clauses = category === 'agent_multi_step' ? draft.clauses : draft.personaClauses;
  const body = clauses.join(text.then);
  // A clause ending in a quoted sentence already has its full stop.
  const end = /[.。?？!！]["”]$/.test(body) ? '' : text.end;
  if (category === 'agent_multi_step') {
    const rule = draft.deleteLatest === null ? '' : text.deleteRule(draft.deleteLatest);
    return `${text.iAm(me, draft.login)}${text.need}${body}${end}${rule}`;
  }
  const rule = draft.deleteLatest === null ? '' : text.personaRule(draft.deleteLatest);
  return `${text.youAre(me, draft.login)}${text.want}${body}${end}${text.persona}${rule}`;
}

/**
 * Builds one agent task: initial_config (random Wi-Fi and device login), involved_classes, the
 * gold path, the question, the functions of the involved classes, and the ground_truth obtained
 * by replaying the rendered mile_stone from the initial_config.
 */
export function buildAgentTask(options: AgentTaskOptions): AgentTask {
  const { rng, language, category } = options;
  const families = new Set(options.families);
  if (!families.size) throw new UserError('agent task families: give at least one of ' + TASK_FAMILIES.join(', '));
  for (const family of families) if (!(TASK_FAMILIES as readonly string[]).includes(family)) throw new UserError(`agent task families: unknown family '${family}' (known: ${TASK_FAMILIES.join(', ')})`);
  const classes = involvedClasses(families);
  const initialConfig: Record<string, Json> = { BaseApi: { wifi: rng.chance(0.5), logged_in: rng.chance(0.6) } };
  const draft = new Draft(rng, language, classes, initialConfig);
  const me = families.has('travel') ? travelTask(draft) : families.has('finance') ? financeTask(draft, families.has('message')) : phoneTask(draft, families);
  const mileStone = draft.steps.map((step) => renderCallString(step));

  const replay = new SandboxSession({ initialConfig, involvedClasses: classes, language, where: 'generated initial_config' });
  const rejected = replay.execute(mileStone).find((outcome) => !outcome.ok);
  if (rejected) throw new Error(`task generator: the rendered mile_stone does not replay: ${rejected.error}`);
  const id = `${category}_${options.index}`;
  return {
    calls: draft.steps,
    record: {
      category,
      language,
      data: { id, question: question(draft, me, category), initial_config: initialConfig, path: [], function: replay.functions(), involved_classes: classes },
      answer: { id, ground_truth: replay.groundTruth(), mile_stone: mileStone },
    },
  };
}
