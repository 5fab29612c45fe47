import { UserError } from '../../../core/errors.ts';
import type { Json } from '../../../core/records.ts';
import type { AceLanguage } from '../record.ts';
import { BASE_METHODS, BaseApi } from './base-api.ts';
import { pyFloat } from './python-call.ts';
import { param, type Args, type MethodSpec, type SandboxClassName } from './sandbox.ts';

export interface FoodUser { user_id: string; password: string; balance: number }
export interface MenuItem { product: string; price: number }
export interface Merchant { merchant_id: string; service_type: string; menu: MenuItem[] }
export interface OrderItem { product: string; quantity: number; price_per_unit: number }
export interface FoodOrder { user_name: string; merchant_name: string; items: OrderItem[]; total_price: number }

const TEXT = {
  en: {
    wifiOff: 'Wi-Fi is not enabled, unable to login',
    noUser: 'User does not exist',
    badPassword: 'Incorrect password',
    already: (user: string) => `${user} is already logged in`,
    loggedIn: (user: string) => `User ${user} has successfully logged in!`,
    nobody: 'No users are currently logged in to the food platform',
    notLoggedIn: (user: string) => `User ${user} is not logged in to the food platform`,
    noMerchant: 'Merchant does not exist',
    badQuantity: (quantity: number, product: string) => `Invalid quantity ${quantity} for product ${product}`,
    noProduct: (product: string, merchant: string) => `Product ${product} does not exist in ${merchant}'s menu`,
    poor: 'Insufficient balance to place the order',
    ordered: (merchant: string, total: number) => `Food delivery order successfully placed with ${merchant}. Total amount: ${pyFloat(total)} yuan`,
    unknownMerchant: (merchant: string) => `Merchant '${merchant}' does not exist`,
    noOrders: 'User has no order records',
    noMatch: 'No matching orders found',
  },
  zh: {
    wifiOff: 'wifi未打开，无法登录',
    noUser: '用户不存在',
    badPassword: '密码错误',
    already: (user: string) => `${user} 已经登录`,
    loggedIn: (user: string) => `用户${user}登陆成功！`,
    nobody: '当前没有登录food platform',
    notLoggedIn: (user: string) => `用户 ${user} 未登录food platform`,
    noMerchant: '商家不存在',
    badQuantity: (quantity: number, product: string) => `无效的数量 ${quantity} 对于商品 ${product}`,
    noProduct: (product: string, merchant: string) => `商品 ${product} 不存在于 ${merchant} 的菜单中`,
    poor: '余额不足，无法下单',
    ordered: (merchant: string, total: number) => `外卖订单成功下单给 ${merchant}，总金额为 ${pyFloat(total)} 元`,
    unknownMerchant: (merchant: string) => `商家 '${merchant}' 不存在`,
    noOrders: '用户没有订单记录',
    noMatch: '没有找到匹配的订单',
  },
};

const USERS: Record<string, FoodUser> = {
  Eve: { user_id: 'U100', password: 'password123', balance: 500.0 },
  Frank: { user_id: 'U101', password: 'password456', balance: 300.0 },
  Grace: { user_id: 'U102', password: 'password789', balance: 150.0 },
  Helen: { user_id: 'U103', password: 'password321', balance: 800.0 },
  Isaac: { user_id: 'U104', password: 'password654', balance: 400.0 },
  Jack: { user_id: 'U105', password: 'password654', balance: 120.0 },
};

/** [merchant en, merchant zh, service type, [product en, product zh, price]×2], ids M100… in order. */
const MERCHANTS: [string, string, string, [string, string, number][]][] = [
  ["Domino's", '达美乐', 'Pizza', [['Margherita Pizza', '玛格丽特披萨', 68.0], ['Super Supreme Pizza', '超级至尊披萨', 88.0]]],
  ['Rice Village Bibimbap', '米村拌饭', 'Bibimbap', [['Stone Pot Bibimbap', '石锅拌饭', 35.0], ['Korean Beef Bibimbap', '韩式牛肉拌饭', 45.0]]],
  ['Haidilao', '海底捞', 'Hotpot', [['Beef Rolls', '牛肉卷', 68.0], ['Seafood Platter', '海鲜拼盘', 88.0]]],
  ['Heytea', '喜茶', 'Milk Tea', [['Cheese Milk Tea', '芝士奶茶', 25.0], ['Four Seasons Spring Milk Tea', '四季春奶茶', 22.0]]],
  ['Hema Fresh', '盒马生鲜', 'Fresh Grocery', [['Organic Vegetable Pack', '有机蔬菜包', 15.0], ['Fresh Gift Pack', '生鲜大礼包', 99.0]]],
  ['Jiutian BBQ', '九田家烤肉', 'BBQ', [['Korean Grilled Beef', '韩式烤牛肉', 128.0], ['Grilled Pork Belly', '烤五花肉', 78.0]]],
];

/** The released merchants and menus in one language. */
export function defaultMerchants(language: AceLanguage): Record<string, Merchant> {
  const index = language === 'en' ? 0 : 1;
  return Object.fromEntries(
    MERCHANTS.map(([en, zh, service_type, menu], i) => [
      index === 0 ? en : zh,
      { merchant_id: `M${100 + i}`, service_type, menu: menu.map((item) => ({ product: item[index] as string, price: item[2] })) },
    ]),
  );
}

const user = (en: string, zh: string) => param('string', en, zh);

export const FOOD_METHODS: readonly MethodSpec[] = [
  ...BASE_METHODS,
  {
    name: 'login_food_platform',
    description: { en: 'Log in to the food delivery platform.', zh: '登录外卖平台。' },
    params: { username: user("The user's username.", '用户的用户名。'), password: param('string', "The user's password.", '用户的密码。') },
  },
  { name: 'view_logged_in_users', description: { en: 'View all users currently logged in to the food platform.', zh: '查看当前登录外卖平台的所有用户。' }, params: {} },
  {
    name: 'check_balance',
    description: { en: "Check a user's balance on the food platform.", zh: '查询用户在外卖平台的余额。' },
    params: { user_name: user("The user's username.", '用户的用户名。') },
  },
  {
    name: 'add_food_delivery_order',
    description: { en: 'Place a food delivery order.', zh: '下外卖订单。' },
    params: {
      username: user('The name of the user placing the order.', '下订单的用户姓名。'),
      merchant_name: param('string', 'The name of the merchant the order is placed with.', '下订单的商家名称。'),
      items: param('list', 'A list of items in the order, with each item containing name and quantity.', '订单中商品的列表，每个商品包含名称和数量。', {
        items: param('dict', 'One ordered product.', '一个订购的商品。', {
          properties: {
            product: param('string', 'The name of the product.', '商品的名称。'),
            // Python reads it with item.get("quantity", 1).
            quantity: param('integer', 'The quantity of the product.', '商品的数量。', { required: false }),
          },
        }),
      }),
    },
  },
  {
    name: 'get_products',
    description: { en: "Get a merchant's product list.", zh: '获取商家的商品列表。' },
    params: { merchant_name: param('string', 'The name of the merchant whose product list is being retrieved.', '要获取商品的商家名称。') },
  },
  {
    name: 'view_orders',
    description: { en: "View all of a user's orders.", zh: '查看用户的所有订单。' },
    params: { user_name: user("The user's username.", '用户的用户名。') },
  },
  {
    name: 'search_orders',
    description: { en: 'Search orders by a keyword in the merchant or product name.', zh: '根据商家或商品名称中的关键词搜索订单。' },
    params: { keyword: param('string', 'The keyword to search for.', '要搜索的关键词。') },
  },
];

/**
 * A Meituan-like food platform (ACEBench's FoodPlatform): users with balances log in (Wi-Fi
 * needed) and order from six merchants; an order needs the user logged in, a known merchant and
 * products, a positive integer quantity and enough balance (en: total ≤ balance; zh, as
 * released: total < balance).
 */
export class FoodPlatform extends BaseApi {
  readonly className: SandboxClassName = 'FoodPlatform';
  readonly savedAttributes: readonly string[] = ['users', 'logged_in_users', 'orders'];
  users: Record<string, FoodUser> = structuredClone(USERS);
  merchant_list: Record<string, Merchant>;
  logged_in_users: string[] = [];
  orders: FoodOrder[] = [];

  constructor(language: AceLanguage) {
    super(language);
    this.merchant_list = defaultMerchants(language);
  }

  methods(): readonly MethodSpec[] {
    return FOOD_METHODS;
  }

  protected releasedConfigKeys(): readonly string[] {
    return ['wifi', 'logged_in', 'logged_in_users'];
  }

  protected loadableAttributes(): readonly string[] {
    return ['users', 'merchant_list', 'orders'];
  }

  /** As released: an absent logged_in_users empties the list. */
  protected loadScenario(config: Record<string, Json>, where: string): void {
    super.loadScenario(config, where);
    const users = config.logged_in_users ?? [];
    if (!Array.isArray(users) || users.some((u) => typeof u !== 'string')) throw new UserError(`${where}.logged_in_users: must be a list of user names`);
    this.logged_in_users = [...(users as string[])];
  }

  private get text() {
    return TEXT[this.language];
  }

  /** Logs a user in; needs Wi-Fi, a known user, the right password, and not logged in yet. */
  login_food_platform({ username, password }: Args): Json {
    const name = username as string;
    if (!this.wifi) return { status: false, message: this.text.wifiOff };
    if (!Object.hasOwn(this.users, name)) return { status: false, message: this.text.noUser };
    if (this.users[name].password !== password) return { status: false, message: this.text.badPassword };
    if (this.logged_in_users.includes(name)) return { status: false, message: this.text.already(name) };
    this.logged_in_users.push(name);
    return { status: true, message: this.text.loggedIn(name) };
  }

  view_logged_in_users(): Json {
    if (!this.logged_in_users.length) return { status: false, message: this.text.nobody };
    return { status: true, logged_in_users: [...this.logged_in_users] };
  }

  /** The user's balance as a bare number (0.0 for an unknown user, as released). */
  check_balance({ user_name }: Args): Json {
    return Object.hasOwn(this.users, user_name as string) ? this.users[user_name as string].balance : 0;
  }

  /** Places an order: checks everything first, then takes the total from the balance. */
  add_food_delivery_order({ username, merchant_name, items }: Args): Json {
    const name = username as string;
    const merchantName = merchant_name as string;
    if (!this.logged_in_users.includes(name)) return { status: false, message: this.text.notLoggedIn(name) };
    if (!Object.hasOwn(this.merchant_list, merchantName)) return { status: false, message: this.text.noMerchant };
    let total = 0;
    const orderItems: OrderItem[] = [];
    for (const item of items as { product: string; quantity?: number }[]) {
      const quantity = item.quantity ?? 1;
      if (quantity <= 0) return { status: false, message: this.text.badQuantity(quantity, item.product) };
      const product = this.merchant_list[merchantName].menu.find((entry) => entry.product === item.product);
      if (!product) return { status: false, message: this.text.noProduct(item.product, merchantName) };
      total += product.price * quantity;
      orderItems.push({ product: item.product, quantity, price_per_unit: product.price });
    }
    // A name logged in through initial_config but absent from users fails as Python's KeyError does.
    if (!Object.hasOwn(this.users, name)) return `Error during execution: '${name}'`;
    const balance = this.users[name].balance;
    if (this.language === 'en' ? total > balance : total >= balance) return { status: false, message: this.text.poor };
    this.users[name].balance -= total;
    this.orders.push({ user_name: name, merchant_name: merchantName, items: orderItems, total_price: total });
    return { status: true, message: this.text.ordered(merchantName, total) };
  }

  /** The merchant's menu (a bare list), or an error result. */
  get_products({ merchant_name }: Args): Json {
    const merchant = this.merchant_list[merchant_name as string];
    if (!Object.hasOwn(this.merchant_list, merchant_name as string)) return { status: false, message: this.text.unknownMerchant(merchant_name as string) };
    return structuredClone(merchant.menu) as unknown as Json;
  }

  view_orders({ user_name }: Args): Json {
    const orders = this.orders.filter((order) => order.user_name === user_name);
    if (!orders.length) return { status: false, message: this.text.noOrders };
    return { status: true, orders: structuredClone(orders) as unknown as Json };
  }

  search_orders({ keyword }: Args): Json {
    const needle = (keyword as string).toLowerCase();
    const orders = this.orders.filter(
      (order) => order.merchant_name.toLowerCase().includes(needle) || order.items.some((item) => item.product.toLowerCase().includes(needle)),
    );
    if (!orders.length) return { status: false, message: this.text.noMatch };
    return { status: true, orders: structuredClone(orders) as unknown as Json };
  }
}
