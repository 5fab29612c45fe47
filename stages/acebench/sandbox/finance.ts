import { UserError } from '../../../core/errors.ts';
import type { Json } from '../../../core/records.ts';
import type { AceLanguage } from '../record.ts';
import { pyFloat } from './python-call.ts';
import { param, Sandbox, type Args, type MethodSpec, type SandboxClassName } from './sandbox.ts';

/**
 * A bank-and-brokerage app, an addition to the released families with their conventions: the
 * state attributes are the ones ACEBench's inference code already saves for a 'Finance' class
 * (user_accounts, is_logged_in, deposit_history, withdrawal_history, loan_history, orders,
 * holdings); results are `{status, message}` dicts; every money-moving method needs the user
 * logged in, a positive amount and enough balance, and changes nothing when a check fails.
 */

export interface FinanceAccount { account_id: string; password: string; balance: number }
export interface Stock { name: string; price: number }

const TEXT = {
  en: {
    noUser: (user: string) => `User ${user} does not exist`,
    badPassword: 'Incorrect password',
    already: (user: string) => `${user} is already logged in`,
    loggedIn: (user: string) => `User ${user} has successfully logged in`,
    notLoggedIn: (user: string) => `User ${user} is not logged in to the finance app`,
    nobody: 'No user is logged in',
    loggedOut: (user: string) => `User ${user} has logged out`,
    badAmount: (amount: number) => `Invalid amount ${pyFloat(amount)}: it must be greater than 0`,
    poor: 'Insufficient balance',
    balance: (balance: number) => `Current balance: ${pyFloat(balance)} yuan`,
    deposited: (amount: number, balance: number) => `Deposited ${pyFloat(amount)} yuan. Balance: ${pyFloat(balance)} yuan`,
    withdrawn: (amount: number, balance: number) => `Withdrew ${pyFloat(amount)} yuan. Balance: ${pyFloat(balance)} yuan`,
    selfTransfer: 'Cannot transfer money to yourself',
    transferred: (amount: number, receiver: string) => `Transferred ${pyFloat(amount)} yuan to ${receiver}`,
    loanLimit: (limit: number) => `Loan refused: total loans would exceed the limit of ${pyFloat(limit)} yuan`,
    loaned: (amount: number, months: number) => `Loan of ${pyFloat(amount)} yuan for ${months} months approved and credited`,
    badTerm: (months: number) => `Invalid loan term ${months}: it must be between 1 and 360 months`,
    noStock: (code: string) => `Stock ${code} does not exist`,
    badQuantity: (quantity: number) => `Invalid quantity ${quantity}: it must be a positive whole number`,
    bought: (quantity: number, code: string, total: number) => `Bought ${quantity} shares of ${code} for ${pyFloat(total)} yuan`,
    notHeld: (code: string, held: number) => `Not enough shares of ${code} to sell (held: ${held})`,
    sold: (quantity: number, code: string, total: number) => `Sold ${quantity} shares of ${code} for ${pyFloat(total)} yuan`,
    paid: (bill: string, amount: number) => `Paid the ${bill} bill of ${pyFloat(amount)} yuan`,
  },
  zh: {
    noUser: (user: string) => `用户 ${user} 不存在`,
    badPassword: '密码错误',
    already: (user: string) => `${user} 已经登录`,
    loggedIn: (user: string) => `用户${user}登录成功`,
    notLoggedIn: (user: string) => `用户 ${user} 未登录理财应用`,
    nobody: '当前没有用户登录',
    loggedOut: (user: string) => `用户${user}已退出登录`,
    badAmount: (amount: number) => `无效的金额 ${pyFloat(amount)}：金额必须大于0`,
    poor: '余额不足',
    balance: (balance: number) => `当前余额：${pyFloat(balance)}元`,
    deposited: (amount: number, balance: number) => `已存入${pyFloat(amount)}元，余额：${pyFloat(balance)}元`,
    withdrawn: (amount: number, balance: number) => `已取出${pyFloat(amount)}元，余额：${pyFloat(balance)}元`,
    selfTransfer: '不能给自己转账',
    transferred: (amount: number, receiver: string) => `已向${receiver}转账${pyFloat(amount)}元`,
    loanLimit: (limit: number) => `贷款被拒绝：贷款总额将超过上限${pyFloat(limit)}元`,
    loaned: (amount: number, months: number) => `${pyFloat(amount)}元、期限${months}个月的贷款已批准并到账`,
    badTerm: (months: number) => `无效的贷款期限 ${months}：必须在1到360个月之间`,
    noStock: (code: string) => `股票 ${code} 不存在`,
    badQuantity: (quantity: number) => `无效的数量 ${quantity}：必须是正整数`,
    bought: (quantity: number, code: string, total: number) => `已买入${code} ${quantity}股，共${pyFloat(total)}元`,
    notHeld: (code: string, held: number) => `${code}持股不足，无法卖出（持有：${held}）`,
    sold: (quantity: number, code: string, total: number) => `已卖出${code} ${quantity}股，共${pyFloat(total)}元`,
    paid: (bill: string, amount: number) => `已缴纳${bill}账单${pyFloat(amount)}元`,
  },
};

const ACCOUNTS: Record<string, FinanceAccount> = {
  Eve: { account_id: 'ACC100', password: 'password123', balance: 10000.0 },
  Frank: { account_id: 'ACC101', password: 'password456', balance: 5000.0 },
  Grace: { account_id: 'ACC102', password: 'password789', balance: 2000.0 },
  Helen: { account_id: 'ACC103', password: 'password321', balance: 8000.0 },
  Isaac: { account_id: 'ACC104', password: 'password654', balance: 3000.0 },
  Jack: { account_id: 'ACC105', password: 'password654', balance: 1000.0 },
};

/** [code, en name, zh name, price]. */
const STOCKS: [string, string, string, number][] = [
  ['AAPL', 'Apple', '苹果', 190.0],
  ['MSFT', 'Microsoft', '微软', 420.0],
  ['NVDA', 'NVIDIA', '英伟达', 120.0],
  ['TSLA', 'Tesla', '特斯拉', 250.0],
  ['BABA', 'Alibaba', '阿里巴巴', 80.0],
];

/** Total loans one user may hold. */
export const LOAN_LIMIT = 50000.0;

export function defaultMarket(language: AceLanguage): Record<string, Stock> {
  return Object.fromEntries(STOCKS.map(([code, en, zh, price]) => [code, { name: language === 'en' ? en : zh, price }]));
}

const user = param('string', 'The name of the account holder.', '账户持有人的姓名。');
const money = (en: string, zh: string) => param('number', en, zh);
const code = param('string', 'The stock code, e.g. AAPL.', '股票代码，例如 AAPL。');

export const FINANCE_METHODS: readonly MethodSpec[] = [
  {
    name: 'login_finance',
    description: { en: 'Log in to the finance app.', zh: '登录理财应用。' },
    params: { user_name: user, password: param('string', "The user's password.", '用户的密码。') },
  },
  { name: 'logout_finance', description: { en: 'Log the current user out of the finance app.', zh: '退出理财应用的当前用户。' }, params: {} },
  { name: 'get_account_balance', description: { en: "Get a logged-in user's account balance.", zh: '查询已登录用户的账户余额。' }, params: { user_name: user } },
  {
    name: 'deposit',
    description: { en: "Deposit money into the user's account.", zh: '向用户账户存款。' },
    params: { user_name: user, amount: money('The amount to deposit, in yuan.', '存款金额（元）。') },
  },
  {
    name: 'withdraw',
    description: { en: "Withdraw money from the user's account.", zh: '从用户账户取款。' },
    params: { user_name: user, amount: money('The amount to withdraw, in yuan.', '取款金额（元）。') },
  },
  {
    name: 'transfer',
    description: { en: 'Transfer money from the logged-in user to another user.', zh: '从已登录用户向另一个用户转账。' },
    params: {
      sender_name: param('string', 'The name of the user sending the money.', '转出方的姓名。'),
      receiver_name: param('string', 'The name of the user receiving the money.', '收款方的姓名。'),
      amount: money('The amount to transfer, in yuan.', '转账金额（元）。'),
    },
  },
  {
    name: 'apply_loan',
    description: { en: 'Apply for a loan, credited to the account at once.', zh: '申请贷款，批准后立即到账。' },
    params: {
      user_name: user,
      amount: money('The loan amount, in yuan.', '贷款金额（元）。'),
      term_months: param('integer', 'The loan term in months (1 to 360).', '贷款期限（月，1到360）。'),
    },
  },
  { name: 'get_stock_price', description: { en: 'Get the current price of a stock.', zh: '查询股票的当前价格。' }, params: { stock_code: code } },
  {
    name: 'buy_stock',
    description: { en: 'Buy shares of a stock with the account balance.', zh: '用账户余额买入股票。' },
    params: { user_name: user, stock_code: code, quantity: param('integer', 'The number of shares.', '股数。') },
  },
  {
    name: 'sell_stock',
    description: { en: 'Sell shares the user holds.', zh: '卖出用户持有的股票。' },
    params: { user_name: user, stock_code: code, quantity: param('integer', 'The number of shares.', '股数。') },
  },
  {
    name: 'pay_bill',
    description: { en: 'Pay a bill (electricity, water, phone, …) from the account balance.', zh: '用账户余额缴纳账单（电费、水费、话费等）。' },
    params: {
      user_name: user,
      bill_type: param('string', 'The kind of bill, e.g. electricity.', '账单类型，例如电费。'),
      amount: money('The amount to pay, in yuan.', '缴费金额（元）。'),
    },
  },
];

export class Finance extends Sandbox {
  readonly className: SandboxClassName = 'Finance';
  readonly savedAttributes: readonly string[] = ['user_accounts', 'is_logged_in', 'deposit_history', 'withdrawal_history', 'loan_history', 'orders', 'holdings'];
  user_accounts: Record<string, FinanceAccount> = structuredClone(ACCOUNTS);
  is_logged_in = false;
  /** Who is logged in while is_logged_in holds. */
  logged_in_user = '';
  deposit_history: Json[] = [];
  withdrawal_history: Json[] = [];
  loan_history: { user_name: string; amount: number; term_months: number }[] = [];
  orders: Json[] = [];
  holdings: Record<string, Record<string, number>> = { Eve: { AAPL: 10 }, Frank: { TSLA: 5 } };
  market: Record<string, Stock>;

  constructor(language: AceLanguage) {
    super(language);
    this.market = defaultMarket(language);
  }

  methods(): readonly MethodSpec[] {
    return FINANCE_METHODS;
  }

  /** The BaseApi settings reach every class; Finance has no Wi-Fi and ignores them. */
  protected releasedConfigKeys(): readonly string[] {
    return ['wifi', 'logged_in'];
  }

  protected loadableAttributes(): readonly string[] {
    return ['user_accounts', 'is_logged_in', 'logged_in_user', 'deposit_history', 'withdrawal_history', 'loan_history', 'orders', 'holdings', 'market'];
  }

  load(config: Json, where: string): void {
    super.load(config, where);
    if (this.is_logged_in && !Object.hasOwn(this.user_accounts, this.logged_in_user)) {
      throw new UserError(`${where}: is_logged_in is true, so logged_in_user must name one of ${Object.keys(this.user_accounts).join(', ')}`);
    }
  }

  private get text() {
    return TEXT[this.language];
  }

  /** The error result when `name` is not the logged-in user, else null. */
  private loginProblem(name: string): Json | null {
    if (!Object.hasOwn(this.user_accounts, name)) return { status: false, message: this.text.noUser(name) };
    if (!this.is_logged_in || this.logged_in_user !== name) return { status: false, message: this.text.notLoggedIn(name) };
    return null;
  }

  /** The error result for a non-positive amount or one above the user's balance, else null. */
  private paymentProblem(name: string, amount: number): Json | null {
    if (!(amount > 0)) return { status: false, message: this.text.badAmount(amount) };
    if (amount > this.user_accounts[name].balance) return { status: false, message: this.text.poor };
    return null;
  }

  /** The error result for a trade by someone not logged in, of an unknown stock or a non-positive quantity, else null. */
  private tradeProblem(name: string, stockCode: string, count: number): Json | null {
    const loginProblem = this.loginProblem(name);
    if (loginProblem) return loginProblem;
    if (!Object.hasOwn(this.market, stockCode)) return { status: false, message: this.text.noStock(stockCode) };
    if (count <= 0) return { status: false, message: this.text.badQuantity(count) };
    return null;
  }

  login_finance({ user_name, password }: Args): Json {
    const name = user_name as string;
    if (!Object.hasOwn(this.user_accounts, name)) return { status: false, message: this.text.noUser(name) };
    if (this.user_accounts[name].password !== password) return { status: false, message: this.text.badPassword };
    if (this.is_logged_in) return { status: false, message: this.text.already(this.logged_in_user) };
    this.is_logged_in = true;
    this.logged_in_user = name;
    return { status: true, message: this.text.loggedIn(name) };
  }

  logout_finance(): Json {
    if (!this.is_logged_in) return { status: false, message: this.text.nobody };
    const name = this.logged_in_user;
    this.is_logged_in = false;
    this.logged_in_user = '';
    return { status: true, message: this.text.loggedOut(name) };
  }

  get_account_balance({ user_name }: Args): Json {
    const name = user_name as string;
    const problem = this.loginProblem(name);
    if (problem) return problem;
    const balance = this.user_accounts[name].balance;
    return { status: true, message: this.text.balance(balance), balance };
  }

  deposit({ user_name, amount }: Args): Json {
    const name = user_name as string;
    const value = amount as number;
    const problem = this.loginProblem(name) ?? (value > 0 ? null : { status: false, message: this.text.badAmount(value) });
    if (problem) return problem;
    const account = this.user_accounts[name];
    account.balance += value;
    this.deposit_history.push({ user_name: name, amount: value, source: 'cash' });
    return { status: true, message: this.text.deposited(value, account.balance) };
  }

  withdraw({ user_name, amount }: Args): Json {
    const name = user_name as string;
    const value = amount as number;
    const problem = this.loginProblem(name) ?? this.paymentProblem(name, value);
    if (problem) return problem;
    const account = this.user_accounts[name];
    account.balance -= value;
    this.withdrawal_history.push({ user_name: name, amount: value, purpose: 'cash' });
    return { status: true, message: this.text.withdrawn(value, account.balance) };
  }

  transfer({ sender_name, receiver_name, amount }: Args): Json {
    const sender = sender_name as string;
    const receiver = receiver_name as string;
    const value = amount as number;
    const problem =
      this.loginProblem(sender) ??
      (Object.hasOwn(this.user_accounts, receiver) ? null : { status: false, message: this.text.noUser(receiver) }) ??
      (sender === receiver ? { status: false, message: this.text.selfTransfer } : null) ??
      this.paymentProblem(sender, value);
    if (problem) return problem;
    this.user_accounts[sender].balance -= value;
    this.user_accounts[receiver].balance += value;
    this.withdrawal_history.push({ user_name: sender, amount: value, purpose: `transfer to ${receiver}` });
    this.deposit_history.push({ user_name: receiver, amount: value, source: `transfer from ${sender}` });
    return { status: true, message: this.text.transferred(value, receiver) };
  }

  apply_loan({ user_name, amount, term_months }: Args): Json {
    const name = user_name as string;
    const value = amount as number;
    const months = term_months as number;
    const problem = this.loginProblem(name) ?? (value > 0 ? null : { status: false, message: this.text.badAmount(value) });
    if (problem) return problem;
    if (months < 1 || months > 360) return { status: false, message: this.text.badTerm(months) };
    const owed = this.loan_history.filter((loan) => loan.user_name === name).reduce((sum, loan) => sum + loan.amount, 0);
    if (owed + value > LOAN_LIMIT) return { status: false, message: this.text.loanLimit(LOAN_LIMIT) };
    this.user_accounts[name].balance += value;
    this.loan_history.push({ user_name: name, amount: value, term_months: months });
    return { status: true, message: this.text.loaned(value, months) };
  }

  get_stock_price({ stock_code }: Args): Json {
    const stock = this.market[stock_code as string];
    if (!Object.hasOwn(this.market, stock_code as string)) return { status: false, message: this.text.noStock(stock_code as string) };
    return { status: true, stock_code, name: stock.name, price: stock.price };
  }

  buy_stock({ user_name, stock_code, quantity }: Args): Json {
    const name = user_name as string;
    const stockCode = stock_code as string;
    const count = quantity as number;
    const problem = this.tradeProblem(name, stockCode, count);
    if (problem) return problem;
    const price = this.market[stockCode].price;
    const total = price * count;
    if (total > this.user_accounts[name].balance) return { status: false, message: this.text.poor };
    this.user_accounts[name].balance -= total;
    const held = (this.holdings[name] ??= {});
    held[stockCode] = (held[stockCode] ?? 0) + count;
    this.orders.push({ user_name: name, type: 'buy', stock_code: stockCode, quantity: count, price, total });
    return { status: true, message: this.text.bought(count, stockCode, total) };
  }

  sell_stock({ user_name, stock_code, quantity }: Args): Json {
    const name = user_name as string;
    const stockCode = stock_code as string;
    const count = quantity as number;
    const problem = this.tradeProblem(name, stockCode, count);
    if (problem) return problem;
    const held = this.holdings[name]?.[stockCode] ?? 0;
    if (held < count) return { status: false, message: this.text.notHeld(stockCode, held) };
    const price = this.market[stockCode].price;
    const total = price * count;
    this.user_accounts[name].balance += total;
    if (held === count) delete this.holdings[name][stockCode];
    else this.holdings[name][stockCode] = held - count;
    this.orders.push({ user_name: name, type: 'sell', stock_code: stockCode, quantity: count, price, total });
    return { status: true, message: this.text.sold(count, stockCode, total) };
  }

  pay_bill({ user_name, bill_type, amount }: Args): Json {
    const name = user_name as string;
    const value = amount as number;
    const problem = this.loginProblem(name) ?? this.paymentProblem(name, value);
    if (problem) return problem;
    this.user_accounts[name].balance -= value;
    this.withdrawal_history.push({ user_name: name, amount: value, purpose: `${bill_type} bill` });
    return { status: true, message: this.text.paid(bill_type as string, value) };
  }
}
