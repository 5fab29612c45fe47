import { describe, expect, it } from 'vitest';
import type { Json } from '../core/records.ts';
import { executeCalls, SandboxSession, type SessionOptions } from '../stages/acebench/sandbox/execute.ts';
import { parseCallString, pyFloat, renderCallString } from '../stages/acebench/sandbox/python-call.ts';
import { RELEASED_FUNCTIONS } from '../stages/acebench/sandbox/released-functions.ts';

const ONLINE = { BaseApi: { wifi: true, logged_in: true } };

function session(involvedClasses: string[], initialConfig: Json = ONLINE, language: 'en' | 'zh' = 'en'): SandboxSession {
  return new SandboxSession({ initialConfig, involvedClasses, language } satisfies SessionOptions);
}

/** Runs one call and checks it changed no state. */
function expectNoChange(s: SandboxSession, call: string) {
  const before = JSON.stringify(s.state());
  const [outcome] = s.execute(call);
  expect(JSON.stringify(s.state())).toBe(before);
  return outcome;
}

describe('mile_stone call strings', () => {
  it('reads calls with keyword arguments of every literal kind', () => {
    const parsed = parseCallString(
      "[f(a='x', b=2, c=-1.5, d=True, e=None, g=[1, 'two'], h={'k': [False]}, t=(1, 2)), turn_on_wifi()] ",
    );
    expect(parsed).toEqual({
      calls: [
        { name: 'f', arguments: { a: 'x', b: 2, c: -1.5, d: true, e: null, g: [1, 'two'], h: { k: [false] }, t: [1, 2] } },
        { name: 'turn_on_wifi', arguments: {} },
      ],
      repairedQuotes: 0,
    });
    expect(parseCallString('login_device(), view(s="it\'s \\"q\\"")').calls).toEqual([
      { name: 'login_device', arguments: {} },
      { name: 'view', arguments: { s: 'it\'s "q"' } },
    ]);
  });

  it("takes a released unescaped quote ('Domino's') as text, and says so; strict mode reports it as Python would", () => {
    const released = "[add_food_delivery_order(username='Eve', merchant_name='Domino's', items=[{'product': 'Super Supreme', 'quantity': 1}])]";
    const parsed = parseCallString(released);
    expect(parsed.repairedQuotes).toBe(1);
    expect(parsed.calls[0].arguments.merchant_name).toBe("Domino's");
    expect(() => parseCallString(released, { lenient: false })).toThrow(
      /merchant_name='Domino's'.*unescaped ' inside a string \(Python's ast\.parse, and so ACEBench's harness, rejects it.*at column 63/,
    );
  });

  it('renders Python literals that read back to the same calls', () => {
    const calls = [{ name: 'send_message', arguments: { sender_name: 'Eve', message: "Don't forget", n: 3, ok: false, none: null, items: [{ product: 'A', quantity: 1 }] } }];
    const text = renderCallString(calls);
    expect(text).toBe(`[send_message(sender_name='Eve', message="Don't forget", n=3, ok=False, none=None, items=[{'product': 'A', 'quantity': 1}])]`);
    expect(parseCallString(text, { lenient: false }).calls).toEqual(calls);
    expect([pyFloat(88), pyFloat(198), pyFloat(0.1 + 0.2), pyFloat(1e20), pyFloat(1.5e-5), pyFloat(-2)]).toEqual(['88.0', '198.0', '0.30000000000000004', '1e+20', '1.5e-05', '-2.0']);
  });

  it('rejects what is not a call list with the column and what was expected', () => {
    expect(() => parseCallString("[f('x')]")).toThrow(/f: positional argument; ACEBench calls pass every argument by keyword \(name=value\) at column 4/);
    expect(() => parseCallString("[f(a='x)]")).toThrow(/unterminated string/);
    expect(() => parseCallString('[f(a=x)]')).toThrow(/'x' is not a literal \(a string needs quotes\) at column 7/);
    expect(() => parseCallString('[f(a=1, a=2)]')).toThrow(/argument 'a' given twice/);
    expect(() => parseCallString('[f(a=1)] extra')).toThrow(/unexpected text after the calls/);
    // A '__proto__' key stays data, not the prototype.
    const odd = parseCallString("[f(x={'__proto__': 1})]").calls[0].arguments.x as Record<string, Json>;
    expect(Object.keys(odd)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(odd)).toBe(Object.prototype);
  });
});

describe('executor', () => {
  it('rejects an unknown method, a wrong type, a missing or an unexpected argument with which call and what was expected, changing nothing', () => {
    const s = session(['BaseApi', 'MessageApi']);
    expect(expectNoChange(s, '[order_pizza(size=2)]')).toEqual({
      call: 'order_pizza(size=2)', ok: false, error: "order_pizza(size=2): unknown method 'order_pizza' (none of the involved classes BaseApi, MessageApi has it)",
    });
    expect(expectNoChange(s, "[delete_message(message_id='3')]").error).toBe(`delete_message(message_id='3'): argument 'message_id' must be an integer, got a string ("3")`);
    expect(expectNoChange(s, "[send_message(sender_name='Eve', message='hi')]").error).toBe(
      "send_message(sender_name='Eve', message='hi'): missing required argument 'receiver_name' (a string)",
    );
    expect(expectNoChange(s, '[delete_message(message_id=3, force=True)]').error).toBe(
      "delete_message(message_id=3, force=True): unexpected argument 'force' (expected message_id)",
    );
    expect(expectNoChange(s, "[delete_message(message_id='3'").error).toBe(`call string "[delete_message(message_id='3'": expected ',' or ')' at column 31`);
  });

  it('a blank step and a method that cannot read its loaded state give rejected outcomes, not nothing or a stack', () => {
    expect(expectNoChange(session(['BaseApi', 'MessageApi']), '[]')).toEqual({ call: '[]', ok: false, error: 'call string "[]": holds no call' });
    const broken = session(['BaseApi', 'MessageApi'], { ...(ONLINE as Record<string, Json>), MessageApi: { inbox: { 1: { sender_id: 'USR100', receiver_id: 'USR101' } } } });
    const [outcome] = broken.execute("[search_messages(user_name='Eve', keyword='hi')]");
    expect(outcome).toMatchObject({ ok: false });
    expect(outcome!.error).toMatch(/^search_messages\(user_name='Eve', keyword='hi'\): the sandbox could not run it on this state \(.+\); check the record's initial_config$/);
  });

  it('loads each class with its own entry and then the BaseApi one, and a call reaches every instance that has the method', () => {
    const s = session(['BaseApi', 'MessageApi', 'FoodPlatform'], { BaseApi: { logged_in: true }, FoodPlatform: { logged_in_users: ['Eve'] } });
    // As released, the BaseApi entry (no logged_in_users) empties FoodPlatform's list again.
    expect(s.state().FoodPlatform.logged_in_users).toEqual([]);
    const send = "[send_message(sender_name='Eve', receiver_name='Frank', message='hi')]";
    expect(s.execute(send)[0].result).toEqual({ status: false, message: 'Wi-Fi is turned off, cannot send messages at this time' });
    const [wifi] = s.execute('[turn_on_wifi()]');
    expect(wifi.result).toEqual({ status: true, message: 'Wi-Fi has been turned on' });
    // MessageApi's own Wi-Fi came on too: the next check is the full inbox.
    expect(s.execute(send)[0].result).toEqual({ status: false, message: 'Inbox capacity is full. You need to ask the user which message to delete.' });
    const login = s.execute("[login_food_platform(username='Eve', password='password123')]")[0];
    expect(login.result).toEqual({ status: true, message: 'User Eve has successfully logged in!' });
    expect(s.state().BaseApi).toEqual({ wifi: true, logged_in: true });
  });

  it('refuses a bad initial_config or class list with the record and key', () => {
    expect(() => session(['BaseApi', 'Bank'])).toThrow("initial_config: involved class 'Bank' is not a sandbox (known: BaseApi, MessageApi, ReminderApi, FoodPlatform, Travel, Finance)");
    expect(() => session(['MessageApi'], { MessageApi: { inboxes: {} } })).toThrow("initial_config.MessageApi: unknown key 'inboxes' for MessageApi (known: wifi, logged_in, max_capacity, user_list, inbox, message_id_counter)");
    expect(() => session(['BaseApi'], { BaseApi: { wifi: 'yes' } })).toThrow('initial_config.BaseApi.wifi: must be true or false, got "yes"');
    expect(() => session(['MessageApi'], { MessageApi: { inbox: { one: {} } } })).toThrow("initial_config.MessageApi.inbox: key 'one' is not an integer id");
  });

  it('offers the released function descriptions verbatim, and builds the others in the same shape', () => {
    const functions = session(['BaseApi', 'MessageApi']).functions();
    expect(functions.map((f) => f.name)).toEqual(['turn_on_wifi', 'login_device', 'send_message', 'delete_message', 'view_messages_between_users', 'search_messages', 'get_all_message_times_with_ids', 'get_latest_message_id', 'get_earliest_message_id']);
    expect(functions[2]).toEqual(RELEASED_FUNCTIONS.en.send_message);
    expect(functions[6]).toEqual({ name: 'get_all_message_times_with_ids', description: 'Get the time of every message together with its message ID.', parameters: { type: 'dict', required: [], properties: {} } });
    const deposit = session(['Finance'], {}, 'zh').functions().find((f) => f.name === 'deposit');
    expect(deposit).toEqual({
      name: 'deposit',
      description: '向用户账户存款。',
      parameters: { type: 'dict', required: ['user_name', 'amount'], properties: { user_name: { type: 'string', description: '账户持有人的姓名。' }, amount: { type: 'number', description: '存款金额（元）。' } } },
    });
  });
});

describe('BaseApi and MessageApi', () => {
  it('gold path: Wi-Fi on, latest message deleted, message sent (ids continue at 7, no time)', () => {
    const { results, state } = executeCalls({
      initialConfig: { BaseApi: { wifi: false, logged_in: false } },
      involvedClasses: ['BaseApi', 'MessageApi'],
      language: 'en',
      calls: ['[turn_on_wifi()]', '[login_device()]', '[get_latest_message_id()]', '[delete_message(message_id=4)]', "[send_message(sender_name='Eve', receiver_name='Frank', message='See you')]"],
    });
    expect(results.map((r) => r.result)).toEqual([
      { status: true, message: 'Wi-Fi has been turned on' },
      { status: true, message: 'Device has been logged in' },
      { status: true, message: 'The latest message ID is 4', message_id: 4 },
      { status: true, message: 'Message ID 4 has been successfully deleted.' },
      { status: true, message: 'Message successfully sent to Frank.' },
    ]);
    expect(state.BaseApi).toEqual({ wifi: true, logged_in: true });
    expect(Object.keys(state.MessageApi.inbox as object)).toEqual(['1', '2', '3', '5', '6', '7']);
    expect((state.MessageApi.inbox as Record<string, Json>)['7']).toEqual({ sender_id: 'USR100', receiver_id: 'USR101', message: 'See you' });
  });

  it('preconditions: logged out, Wi-Fi off, inbox full each return the error and change nothing (zh messages)', () => {
    const loggedOut = session(['BaseApi', 'MessageApi'], { BaseApi: { wifi: true, logged_in: false } }, 'zh');
    expect(expectNoChange(loggedOut, "[send_message(sender_name='Eve', receiver_name='Frank', message='hi')]").result).toEqual({ status: false, message: 'device未登录，无法发送短信' });
    expect(expectNoChange(loggedOut, '[delete_message(message_id=1)]').result).toEqual({ status: false, message: 'device未登录，无法删除短信' });
    const offline = session(['BaseApi', 'MessageApi'], { BaseApi: { wifi: false, logged_in: true } });
    expect(expectNoChange(offline, "[send_message(sender_name='Eve', receiver_name='Frank', message='hi')]").result).toEqual({ status: false, message: 'Wi-Fi is turned off, cannot send messages at this time' });
    expect(expectNoChange(session(['BaseApi', 'MessageApi']), "[send_message(sender_name='Eve', receiver_name='Zed', message='hi')]").result).toEqual({ status: false, message: 'Inbox capacity is full. You need to ask the user which message to delete.' });
  });

  it('searches and lists as released; an inbox from initial_config replaces the default one', () => {
    const s = session(['BaseApi', 'MessageApi'], { ...ONLINE, MessageApi: { inbox: { 2: { sender_id: 'USR104', receiver_id: 'USR101', message: 'Call me', time: '2024-01-01' } }, message_id_counter: 2 } });
    expect(s.execute("[search_messages(user_name='Isaac', keyword='CALL')]")[0].result).toEqual({ status: true, messages: [{ id: 2, sender_id: 'USR104', receiver_id: 'USR101', message: 'Call me' }] });
    s.execute("[send_message(sender_name='Isaac', receiver_name='Frank', message='hi')]");
    expect(Object.keys(s.state().MessageApi.inbox as object)).toEqual(['2', '3']);
    // A message sent in the session has no time, so the released code fails on it.
    expect(s.execute('[get_earliest_message_id()]')[0].result).toBe("Error during execution: 'time'");
  });
});

describe('ReminderApi', () => {
  it('gold path: a reminder added under the next id (4) and an old one deleted', () => {
    const s = session(['BaseApi', 'ReminderApi']);
    expect(s.execute("[add_reminder(title='Dentist', description='Check-up', time='2024-08-01 10:00'), delete_reminder(reminder_id=2)]").map((r) => r.result)).toEqual([
      { status: true, message: "Reminder 'Dentist' was successfully added." },
      { status: true, message: 'Reminder ID 2 was successfully deleted.' },
    ]);
    const list = s.state().ReminderApi.reminder_list as Record<string, Json>;
    expect(Object.keys(list)).toEqual(['1', '3', '4']);
    expect(list['4']).toEqual({ reminder_id: 4, title: 'Dentist', description: 'Check-up', time: '2024-08-01 10:00', notified: false });
  });

  it('preconditions: logged out, or six reminders already, return the error and change nothing', () => {
    const loggedOut = session(['BaseApi', 'ReminderApi'], { BaseApi: { logged_in: false } });
    expect(expectNoChange(loggedOut, "[add_reminder(title='a', description='b', time='c')]").result).toEqual({ status: false, message: 'Device not logged in. Unable to add a new reminder.' });
    const full = session(['BaseApi', 'ReminderApi']);
    full.execute(['a', 'b', 'c'].map((t) => `[add_reminder(title='${t}', description='', time='')]`));
    expect(expectNoChange(full, "[add_reminder(title='d', description='', time='')]").result).toEqual({ status: false, message: 'Reminder capacity is full. Unable to add a new reminder.' });
  });

  it('has mark_as_notified in zh only; a wrong type is rejected', () => {
    const zh = session(['BaseApi', 'ReminderApi'], ONLINE, 'zh');
    expect(zh.execute('[mark_as_notified(reminder_id=1)]')[0].result).toEqual({ status: true, message: '提醒ID 1 已标记为已通知' });
    expect((zh.state().ReminderApi.reminder_list as Record<string, { notified: boolean }>)['1'].notified).toBe(true);
    expect(session(['BaseApi', 'ReminderApi']).execute('[mark_as_notified(reminder_id=1)]')[0].error).toMatch(/unknown method 'mark_as_notified'/);
    expect(expectNoChange(zh, '[delete_reminder(reminder_id=True)]').error).toBe("delete_reminder(reminder_id=True): argument 'reminder_id' must be an integer, got a boolean (true)");
  });
});

describe('FoodPlatform', () => {
  it('gold path: Wi-Fi, login, an order of two pizzas taken from the balance', () => {
    const { results, state } = executeCalls({
      initialConfig: { BaseApi: { wifi: false, logged_in: true } },
      involvedClasses: ['BaseApi', 'FoodPlatform'],
      language: 'en',
      calls: ['[turn_on_wifi()]', "[login_food_platform(username='Eve', password='password123')]", `[add_food_delivery_order(username='Eve', merchant_name="Domino's", items=[{'product': 'Margherita Pizza', 'quantity': 2}, {'product': 'Super Supreme Pizza'}])]`],
    });
    expect(results[2].result).toEqual({ status: true, message: "Food delivery order successfully placed with Domino's. Total amount: 224.0 yuan" });
    expect(state.FoodPlatform.logged_in_users).toEqual(['Eve']);
    expect((state.FoodPlatform.users as Record<string, { balance: number }>).Eve.balance).toBe(276);
    expect(state.FoodPlatform.orders).toEqual([
      { user_name: 'Eve', merchant_name: "Domino's", items: [{ product: 'Margherita Pizza', quantity: 2, price_per_unit: 68 }, { product: 'Super Supreme Pizza', quantity: 1, price_per_unit: 88 }], total_price: 224 },
    ]);
  });

  it('preconditions: ordering logged out, logging in with Wi-Fi off, an unknown product, too little balance change nothing', () => {
    const s = session(['BaseApi', 'FoodPlatform']);
    expect(expectNoChange(s, "[add_food_delivery_order(username='Jack', merchant_name='Jiutian BBQ', items=[{'product': 'Korean Grilled Beef', 'quantity': 1}])]").result).toEqual({ status: false, message: 'User Jack is not logged in to the food platform' });
    expect(expectNoChange(session(['BaseApi', 'FoodPlatform'], { BaseApi: { wifi: false } }), "[login_food_platform(username='Jack', password='password654')]").result).toEqual({ status: false, message: 'Wi-Fi is not enabled, unable to login' });
    s.execute("[login_food_platform(username='Jack', password='password654')]");
    expect(expectNoChange(s, "[add_food_delivery_order(username='Jack', merchant_name='Jiutian BBQ', items=[{'product': 'Grilled Pork Belly', 'quantity': 1}, {'product': 'Beef', 'quantity': 1}])]").result).toEqual({ status: false, message: "Product Beef does not exist in Jiutian BBQ's menu" });
    expect(expectNoChange(s, "[add_food_delivery_order(username='Jack', merchant_name='Jiutian BBQ', items=[{'product': 'Korean Grilled Beef', 'quantity': 1}])]").result).toEqual({ status: false, message: 'Insufficient balance to place the order' });
    expect(expectNoChange(s, "[add_food_delivery_order(username='Jack', merchant_name='Jiutian BBQ', items=[{'product': 'Grilled Pork Belly', 'quantity': 0}])]").result).toEqual({ status: false, message: 'Invalid quantity 0 for product Grilled Pork Belly' });
  });

  it('an order of exactly the balance passes in en and fails in zh, as released', () => {
    const users = { Jack: { user_id: 'U105', password: 'p', balance: 68.0 } };
    const order = (language: 'en' | 'zh', merchant: string, product: string) => {
      const s = session(['BaseApi', 'FoodPlatform'], { BaseApi: { wifi: true }, FoodPlatform: { users } }, language);
      s.execute("[login_food_platform(username='Jack', password='p')]");
      return s.execute(`[add_food_delivery_order(username='Jack', merchant_name='${merchant}', items=[{'product': '${product}', 'quantity': 1}])]`)[0].result;
    };
    expect(order('en', 'Haidilao', 'Beef Rolls')).toEqual({ status: true, message: 'Food delivery order successfully placed with Haidilao. Total amount: 68.0 yuan' });
    expect(order('zh', '海底捞', '牛肉卷')).toEqual({ status: false, message: '余额不足，无法下单' });
  });

  it('rejects a wrong type inside the items list with its path', () => {
    expect(expectNoChange(session(['BaseApi', 'FoodPlatform']), "[add_food_delivery_order(username='Eve', merchant_name='Heytea', items=[{'product': 'Cheese Milk Tea', 'quantity': '2'}])]").error).toBe(
      `add_food_delivery_order(username='Eve', merchant_name='Heytea', items=[{'product': 'Cheese Milk Tea', 'quantity': '2'}]): argument 'items[0].quantity' must be an integer, got a string ("2")`,
    );
  });
});

describe('Travel', () => {
  it('gold path: a business booking within the free baggage, and a cancellation refunded in full more than a day ahead', () => {
    const { results, state } = executeCalls({
      initialConfig: ONLINE,
      involvedClasses: ['Travel'],
      language: 'en',
      calls: [
        "[reserve_flight(user_id='user3', password='password789', flight_no='MU1566', cabin='Business Class', payment_method='bank', baggage_count=4)]",
        "[cancel_reservation(user_id='user1', reservation_id='res_1', reason='Change of plans')]",
        "[modify_flight(user_id='user1', reservation_id='res_2', new_flight_no='CZ4321', add_baggage=2)]",
      ],
    });
    expect(results.map((r) => r.result)).toEqual([
      'Booking successful. Reservation ID: res_5. Total cost: 4050 yuan (including baggage fees).',
      'More than 24 hours before departure. Free cancellation successful, 1200 yuan has been refunded.',
      'Flight number has been changed. Baggage has been added. Additional fee to be paid: 50.',
    ]);
    const users = state.Travel.users as Record<string, { cash_balance: number; bank_balance: number }>;
    expect(users.user3.bank_balance).toBe(950);
    expect(users.user1).toMatchObject({ cash_balance: 3200, bank_balance: 49950 });
    const reservations = state.Travel.reservations as Record<string, Json>[];
    expect(reservations[1]).toMatchObject({ reservation_id: 'res_2', flight_no: 'CZ4321', baggage: 3 });
    expect(reservations[4]).toEqual({ reservation_id: 'res_5', user_id: 'user3', flight_no: 'MU1566', payment_method: 'bank', cabin: 'Business Class', baggage: 4 });
  });

  it('less than a day ahead costs 10% (zh messages, Python floats)', () => {
    const s = session(['Travel'], ONLINE, 'zh');
    s.execute("[modify_flight(user_id='user1', reservation_id='res_1', new_cabin='商务舱')]");
    const users = { user1: { user_name: 'Eve', password: 'password123', cash_balance: 0.0, bank_balance: 0.0, membership_level: 'regular' } };
    const late = session(['Travel'], { Travel: { users, flights: [{ flight_no: 'X1', origin: '北京', destination: '上海', depart_time: '2024-07-14 20:00:00', arrival_time: '2024-07-14 22:00:00', status: 'available', seats_available: 1, economy_price: 1000, business_price: 2000 }], reservations: [{ reservation_id: 'res_1', user_id: 'user1', flight_no: 'X1', payment_method: 'bank', cabin: '经济舱', baggage: 1 }] } }, 'zh');
    expect(late.execute("[cancel_reservation(user_id='user1', reservation_id='res_1', reason='计划变更')]")[0].result).toBe('距离出发时间不足24小时，已扣除取消费100.0元，退款900.0元。');
    expect((late.state().Travel.users as Record<string, { cash_balance: number }>).user1.cash_balance).toBe(900);
  });

  it('preconditions: a short balance, a wrong password, an unknown reservation change nothing; a wrong type is rejected', () => {
    const s = session(['Travel']);
    expect(expectNoChange(s, "[reserve_flight(user_id='user1', password='password123', flight_no='CZ4321', cabin='Business Class', payment_method='cash', baggage_count=1)]").result).toBe('Your cash balance is insufficient. Please consider using another payment method.');
    expect(expectNoChange(s, "[reserve_flight(user_id='user1', password='nope', flight_no='CA1234', cabin='Economy Class', payment_method='bank', baggage_count=1)]").result).toBe('Authentication failed. Please check your user ID and password.');
    expect(expectNoChange(s, "[cancel_reservation(user_id='user2', reservation_id='res_1', reason='x')]").result).toBe('Invalid reservation ID or it does not belong to the user.');
    expect(expectNoChange(s, "[reserve_flight(user_id='user1', password='password123', flight_no='CA1234', cabin='Economy Class', payment_method='bank', baggage_count='1')]").error).toMatch(/argument 'baggage_count' must be an integer, got a string \("1"\)$/);
    expect(expectNoChange(s, "[modify_flight(user_id='user1', reservation_id='res_1', new_payment_method='card')]").error).toMatch(/argument 'new_payment_method' must be one of "cash", "bank", got "card"$/);
  });
});

describe('Finance', () => {
  it('gold path: login, a transfer, a stock purchase, a bill', () => {
    const { results, state } = executeCalls({
      initialConfig: {},
      involvedClasses: ['Finance'],
      language: 'en',
      calls: [
        "[login_finance(user_name='Eve', password='password123')]",
        "[transfer(sender_name='Eve', receiver_name='Frank', amount=2500.5)]",
        "[buy_stock(user_name='Eve', stock_code='NVDA', quantity=10)]",
        "[pay_bill(user_name='Eve', bill_type='electricity', amount=300)]",
      ],
    });
    expect(results.map((r) => (r.result as { message: string }).message)).toEqual([
      'User Eve has successfully logged in',
      'Transferred 2500.5 yuan to Frank',
      'Bought 10 shares of NVDA for 1200.0 yuan',
      'Paid the electricity bill of 300.0 yuan',
    ]);
    const accounts = state.Finance.user_accounts as Record<string, { balance: number }>;
    expect([accounts.Eve.balance, accounts.Frank.balance]).toEqual([10000 - 2500.5 - 1200 - 300, 7500.5]);
    expect(state.Finance).toMatchObject({
      is_logged_in: true,
      holdings: { Eve: { AAPL: 10, NVDA: 10 }, Frank: { TSLA: 5 } },
      orders: [{ user_name: 'Eve', type: 'buy', stock_code: 'NVDA', quantity: 10, price: 120, total: 1200 }],
      deposit_history: [{ user_name: 'Frank', amount: 2500.5, source: 'transfer from Eve' }],
      withdrawal_history: [{ user_name: 'Eve', amount: 2500.5, purpose: 'transfer to Frank' }, { user_name: 'Eve', amount: 300, purpose: 'electricity bill' }],
      loan_history: [],
    });
    expect(Object.keys(state.Finance)).toEqual(['user_accounts', 'is_logged_in', 'deposit_history', 'withdrawal_history', 'loan_history', 'orders', 'holdings']);
  });

  it('preconditions: logged out, too little balance, too few shares, a loan over the limit change nothing', () => {
    const s = session(['Finance'], {}, 'zh');
    expect(expectNoChange(s, "[transfer(sender_name='Jack', receiver_name='Eve', amount=10)]").result).toEqual({ status: false, message: '用户 Jack 未登录理财应用' });
    s.execute("[login_finance(user_name='Jack', password='password654')]");
    expect(expectNoChange(s, "[withdraw(user_name='Jack', amount=1000.01)]").result).toEqual({ status: false, message: '余额不足' });
    expect(expectNoChange(s, "[sell_stock(user_name='Jack', stock_code='AAPL', quantity=1)]").result).toEqual({ status: false, message: 'AAPL持股不足，无法卖出（持有：0）' });
    expect(expectNoChange(s, "[apply_loan(user_name='Jack', amount=50000.5, term_months=12)]").result).toEqual({ status: false, message: '贷款被拒绝：贷款总额将超过上限50000.0元' });
    expect(expectNoChange(s, "[deposit(user_name='Jack', amount=-5)]").result).toEqual({ status: false, message: '无效的金额 -5.0：金额必须大于0' });
  });

  it('rejects a wrong type, and a login state without its user in initial_config', () => {
    expect(expectNoChange(session(['Finance'], {}), "[deposit(user_name='Eve', amount='100')]").error).toBe(`deposit(user_name='Eve', amount='100'): argument 'amount' must be a number, got a string ("100")`);
    expect(() => session(['Finance'], { Finance: { is_logged_in: true } })).toThrow('initial_config.Finance: is_logged_in is true, so logged_in_user must name one of Eve, Frank, Grace, Helen, Isaac, Jack');
    const loaded = session(['Finance'], { Finance: { is_logged_in: true, logged_in_user: 'Grace' } });
    expect(loaded.execute("[get_account_balance(user_name='Grace')]")[0].result).toEqual({ status: true, message: 'Current balance: 2000.0 yuan', balance: 2000 });
  });
});
