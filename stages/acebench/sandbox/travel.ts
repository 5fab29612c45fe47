import type { Json } from '../../../core/records.ts';
import type { AceLanguage } from '../record.ts';
import { pythonNumber } from '../../../core/python-json.ts';
import { param, Sandbox, type Args, type MethodSpec, type ParamSpec, type SandboxClassName } from './sandbox.ts';

export interface TravelUser { user_name: string; password: string; cash_balance: number; bank_balance: number; membership_level: string }
export interface Flight {
  flight_no: string; origin: string; destination: string; depart_time: string; arrival_time: string;
  status: string; seats_available: number; economy_price: number; business_price: number;
}
export interface Reservation {
  reservation_id: string; user_id: string; flight_no: string; payment_method: string; cabin: string; baggage: number;
  origin?: string; destination?: string;
}


const TEXT = {
  en: {
    economy: 'Economy Class',
    business: 'Business Class',
    airlineCancelled: 'The airline has canceled the flight.',
    noDirect: 'There are no direct flights that meet the criteria.',
    badLogin: 'Incorrect username or password.',
    needId: 'Please provide a valid reservation ID or user ID',
    noTransfer: 'No connecting flights that meet the criteria were found.',
    authFailed: 'Authentication failed. Please check your user ID and password.',
    noFlight: 'Flight not found or not available.',
    badCabin: 'Invalid cabin class.',
    badPayment: 'Invalid payment method',
    poor: (method: string) => `Your ${method} balance is insufficient. Please consider using another payment method.`,
    booked: (id: string, total: number) => `Booking successful. Reservation ID: ${id}. Total cost: ${total} yuan (including baggage fees).`,
    noReservation: 'Reservation not found or user ID does not match.',
    noFlightInfo: 'Flight information not found.',
    flightChanged: 'Flight number has been changed.',
    changeFailed: 'Flight change failed: Invalid new flight number or destination does not match.',
    cabinPaid: (diff: number) => `Cabin change successful. Price difference paid: ${diff}.`,
    cabinPoor: 'Insufficient balance to pay the cabin price difference.',
    cabinRefunded: (diff: number) => `Cabin change successful. Price difference refunded: ${diff}.`,
    baggagePaid: (cost: number) => `Baggage has been added. Additional fee to be paid: ${cost}.`,
    baggagePoor: 'Insufficient balance to pay the additional baggage fees.',
    noFees: 'Modification completed with no additional fees.',
    badUser: 'Invalid user ID.',
    badReservation: 'Invalid reservation ID or it does not belong to the user.',
    badFlight: 'Invalid flight information.',
    used: 'The flight segment has been used and cannot be canceled.',
    cancelledByAirline: (refund: string) => `The flight has been canceled. Your reservation will be canceled free of charge, and ${refund} yuan has been refunded.`,
    freeCancel: (refund: string) => `More than 24 hours before departure. Free cancellation successful, ${refund} yuan has been refunded.`,
    feeCancel: (fee: string, refund: string) => `Less than 24 hours before departure. A cancellation fee of ${fee} yuan has been deducted, and ${refund} yuan has been refunded.`,
  },
  zh: {
    economy: '经济舱',
    business: '商务舱',
    airlineCancelled: '航空公司取消航班',
    noDirect: '没有符合条件的直达航班',
    badLogin: '用户名或密码不正确',
    needId: '请提供有效的预订ID或用户ID',
    noTransfer: '未找到符合条件的中转航班。',
    authFailed: '认证失败，请检查用户ID和密码。',
    noFlight: '航班不存在或不可预订。',
    badCabin: '舱位无效。',
    badPayment: '支付方式无效',
    poor: (method: string) => `${method}余额不足，请考虑换一种支付方式`,
    booked: (id: string, total: number) => `预订成功，预订号：${id}，总费用：${total}元（包含行李费用）。`,
    noReservation: '预订未找到或用户ID不匹配。',
    noFlightInfo: '航班信息未找到。',
    flightChanged: '航班号已更改。',
    changeFailed: '航班更改失败：新的航班号无效或目的地不匹配。',
    cabinPaid: (diff: number) => `舱位更改成功。已支付差价: ${diff}。`,
    cabinPoor: '余额不足，无法支付舱位差价。',
    cabinRefunded: (diff: number) => `舱位更改成功。已退款差价: ${diff}。`,
    baggagePaid: (cost: number) => `行李已增加。需支付额外费用: ${cost}。`,
    baggagePoor: '余额不足，无法支付额外行李费用。',
    noFees: '修改完成，无需额外费用。',
    badUser: '用户ID无效。',
    badReservation: '预订ID无效或与该用户无关。',
    badFlight: '航班信息无效。',
    used: '航段已使用，无法取消。',
    cancelledByAirline: (refund: string) => `航班已取消，您的预订将被免费取消，已退款${refund}元。`,
    freeCancel: (refund: string) => `距离出发时间超过24小时，免费取消成功，已退款${refund}元。`,
    feeCancel: (fee: string, refund: string) => `距离出发时间不足24小时，已扣除取消费${fee}元，退款${refund}元。`,
  },
};

const USERS: Record<string, TravelUser> = {
  user1: { user_name: 'Eve', password: 'password123', cash_balance: 2000.0, bank_balance: 50000.0, membership_level: 'regular' },
  user2: { user_name: 'Frank', password: 'password456', cash_balance: 8000.0, bank_balance: 8000.0, membership_level: 'silver' },
  user3: { user_name: 'Grace', password: 'password789', cash_balance: 1000.0, bank_balance: 5000.0, membership_level: 'gold' },
};

const CITIES: Record<string, string> = { Beijing: '北京', Shanghai: '上海', Nanjing: '南京', Shenzhen: '深圳', Xiamen: '厦门', Chengdu: '成都', Fuzhou: '福州' };

/** [flight_no, origin, destination, depart, arrive, seats, economy, business]; all available. */
const FLIGHTS: [string, string, string, string, string, number, number, number][] = [
  ['CA1234', 'Beijing', 'Shanghai', '2024-07-15 08:00:00', '2024-07-15 10:30:00', 5, 1200, 3000],
  ['MU5678', 'Shanghai', 'Beijing', '2024-07-16 09:00:00', '2024-07-16 11:30:00', 3, 1900, 3000],
  ['CZ4321', 'Shanghai', 'Beijing', '2024-07-16 20:00:00', '2024-07-16 22:00:00', 8, 2500, 4000],
  ['CZ4352', 'Shanghai', 'Beijing', '2024-07-17 20:00:00', '2024-07-17 22:00:00', 8, 1600, 2500],
  ['MU3561', 'Beijing', 'Nanjing', '2024-07-18 08:00:00', '2024-07-18 10:00:00', 8, 1500, 4000],
  ['MU1566', 'Beijing', 'Nanjing', '2024-07-18 20:00:00', '2024-07-18 22:00:00', 8, 1500, 4000],
  ['CZ1765', 'Nanjing', 'Shenzhen', '2024-07-17 20:30:00', '2024-07-17 22:00:00', 8, 1500, 2500],
  ['CZ1765', 'Nanjing', 'Shenzhen', '2024-07-18 12:30:00', '2024-07-18 15:00:00', 8, 1500, 2500],
  ['MH1765', 'Xiamen', 'Chengdu', '2024-07-17 12:30:00', '2024-07-17 15:00:00', 8, 1500, 2500],
  ['MH2616', 'Chengdu', 'Xiamen', '2024-07-18 18:30:00', '2024-07-18 21:00:00', 8, 1500, 2500],
  ['MH2616', 'Chengdu', 'Fuzhou', '2024-07-16 18:30:00', '2024-07-16 21:00:00', 8, 1500, 2500],
];

/** [id, user, flight_no, cabin is business, origin, destination]; all bank-paid with one bag (res_4's MU2616 is not a flight, as released). */
const RESERVATIONS: [string, string, string, boolean, string, string][] = [
  ['res_1', 'user1', 'CA1234', false, 'Beijing', 'Shanghai'],
  ['res_2', 'user1', 'MU5678', true, 'Shanghai', 'Beijing'],
  ['res_3', 'user2', 'MH1765', true, 'Xiamen', 'Chengdu'],
  ['res_4', 'user2', 'MU2616', true, 'Chengdu', 'Xiamen'],
];

const city = (name: string, language: AceLanguage) => (language === 'en' ? name : CITIES[name]);

function defaultFlights(language: AceLanguage): Flight[] {
  return FLIGHTS.map(([flight_no, origin, destination, depart_time, arrival_time, seats_available, economy_price, business_price]) => ({
    flight_no, origin: city(origin, language), destination: city(destination, language), depart_time, arrival_time,
    status: 'available', seats_available, economy_price, business_price,
  }));
}

function defaultReservations(language: AceLanguage): Reservation[] {
  return RESERVATIONS.map(([reservation_id, user_id, flight_no, business, origin, destination]) => ({
    reservation_id, user_id, flight_no, payment_method: 'bank', cabin: business ? TEXT[language].business : TEXT[language].economy, baggage: 1,
    origin: city(origin, language), destination: city(destination, language),
  }));
}

/** Free checked bags by membership level and cabin (Economy, Business). */
export const FREE_BAGS: Record<string, [number, number]> = { regular: [1, 2], silver: [2, 3], gold: [3, 3] };
/** "Now" for cancellations, as released. */
const NOW = Date.UTC(2024, 6, 14, 6, 0, 0);
const DAY = 24 * 3600 * 1000;
const parseTime = (text: string) => Date.parse(`${text.replace(' ', 'T')}Z`);

const text = (en: string, zh: string, extra: Partial<ParamSpec> = {}) => param('string', en, zh, extra);
const optional = { required: false, default: null };

export const TRAVEL_METHODS: readonly MethodSpec[] = [
  {
    name: 'get_flight_details',
    description: { en: 'Query basic flight information by origin and destination.', zh: '根据出发地和目的地查询航班的基本信息。' },
    params: {
      origin: text('The origin city of the flight.', '航班的出发城市。', optional),
      destination: text('The destination city of the flight.', '航班的目的城市。', optional),
    },
  },
  {
    name: 'get_user_details',
    description: { en: 'Query user information by user ID and password.', zh: '根据用户名和密码查询用户信息。' },
    params: { user_id: text('The id of the user.', '用户的ID。'), password: text('The password of the user.', '用户的密码。') },
  },
  {
    name: 'get_reservation_details',
    description: { en: 'Query reservations by reservation ID or user ID, with their flight information.', zh: '根据预订ID或用户ID查询预订信息，包括对应航班的基本信息。' },
    params: {
      reservation_id: text('The reservation ID of the booking.', '预订的ID。', optional),
      user_id: text('The ID of the user.', '用户的ID。', optional),
    },
  },
  {
    name: 'reserve_flight',
    description: { en: 'Book a flight for the user, including passenger details and payment methods.', zh: '为用户预订航班，包括乘客详情和支付方式。' },
    params: {
      user_id: text('The ID of the user making the reservation.', '进行预订的用户ID。'),
      password: text('The password of the user for authentication.', '用户的密码以进行身份验证。'),
      flight_no: text('The flight number the user wants to book.', '用户想要预订的航班号。'),
      cabin: text('The cabin class for the booking.', '预订的舱位类别（例如：经济舱，商务舱）。'),
      payment_method: text('The payment method (bank or cash).', '用于预订的支付方式（例如：银行，现金）。'),
      baggage_count: param('integer', 'The total number of checked baggage items.', '托运行李的总数量。'),
    },
  },
  {
    name: 'modify_flight',
    description: { en: 'Modify a flight reservation: flight number, cabin class, added baggage, payment method.', zh: '修改航班预订，包括更改航班、舱位和行李。' },
    params: {
      user_id: text('The ID of the user making the modification.', '进行修改的用户ID。'),
      reservation_id: text('The reservation ID of the booking to be modified.', '要修改的预订ID。'),
      new_flight_no: text('The new flight number to change to (optional).', '要更改的新航班号（可选）。', optional),
      new_cabin: text('The new cabin class to change to (optional).', '要更改的新舱位（可选）。', optional),
      add_baggage: param('integer', 'The number of additional checked baggage items to add.', '新增托运行李的数量。', { required: false, default: 0 }),
      new_payment_method: text('Payment method for any additional charges.', '新的付款方式（可选）。', { ...optional, enum: ['cash', 'bank'] }),
    },
  },
  {
    name: 'cancel_reservation',
    description: { en: 'Cancel a reservation and refund to the cash balance by the cancellation policy.', zh: '取消预订，并按取消政策退款到现金余额。' },
    params: {
      user_id: text('The ID of the user who made the reservation.', '进行预订的用户ID。'),
      reservation_id: text('The ID of the reservation to cancel.', '要取消的预订ID。'),
      reason: text('The reason for cancellation.', '取消原因。'),
    },
  },
  {
    name: 'find_transfer_flights',
    description: { en: 'Find connecting flights through a transfer city, the first leg landing before the second departs.', zh: '查找从出发城市到目的地城市的中转航班，确保第一班航班降落时间早于第二班航班起飞时间。' },
    params: {
      origin_city: text('The starting city for the flight.', '出发城市。'),
      transfer_city: text('The city where the transfer takes place.', '中转城市。'),
      destination_city: text('The final destination city.', '到达城市。'),
    },
  },
  {
    name: 'get_baggage_allowance',
    description: { en: 'Free checked baggage allowance for a membership level and cabin class.', zh: '获取用户基于会员等级和舱位的免费托运行李限额。' },
    params: { membership_level: text('regular, silver or gold.', '会员等级（regular、silver、gold）。'), cabin_class: text('The cabin class.', '舱位。') },
  },
  {
    name: 'calculate_baggage_fee',
    description: { en: 'The fee for checked bags beyond the free allowance (50 yuan each).', zh: '计算超出免费额度的托运行李费用（每件50元）。' },
    params: {
      membership_level: text('regular, silver or gold.', '会员等级（regular、silver、gold）。'),
      cabin_class: text('The cabin class.', '舱位。'),
      baggage_count: param('integer', 'The number of checked bags.', '托运行李数量。'),
    },
  },
];

/**
 * Flight booking (ACEBench's Travel): three users with cash and bank balances and membership
 * levels, eleven flights, four reservations. Not a phone app: it has no Wi-Fi or device login.
 * Where the released code crashes (a wrong password or an unknown flight in reserve_flight, an
 * unknown cabin) this returns a message instead and changes nothing; elsewhere it keeps the
 * released rules, quirks included (cancel refunds but keeps the reservation; a cabin change is
 * kept when its price difference cannot be paid).
 */
export class Travel extends Sandbox {
  readonly className: SandboxClassName = 'Travel';
  readonly savedAttributes: readonly string[] = ['users', 'reservations'];
  users: Record<string, TravelUser> = structuredClone(USERS);
  flights: Flight[];
  reservations: Reservation[];

  constructor(language: AceLanguage) {
    super(language);
    this.flights = defaultFlights(language);
    this.reservations = defaultReservations(language);
  }

  methods(): readonly MethodSpec[] {
    return TRAVEL_METHODS;
  }

  /** The BaseApi settings reach every class; Travel ignores them, as released. */
  protected releasedConfigKeys(): readonly string[] {
    return ['wifi', 'logged_in'];
  }

  protected loadableAttributes(): readonly string[] {
    return ['users', 'flights', 'reservations'];
  }

  private get text() {
    return TEXT[this.language];
  }

  /** 0 for economy, 1 for business, -1 for anything else. */
  private cabinIndex(cabin: string): number {
    return cabin === this.text.economy ? 0 : cabin === this.text.business ? 1 : -1;
  }

  private price(flight: Flight, cabin: string): number {
    return cabin === this.text.economy ? flight.economy_price : flight.business_price;
  }

  get_flight_details({ origin, destination }: Args): Json {
    const flights = this.flights.filter((f) => (!origin || f.origin === origin) && (!destination || f.destination === destination));
    if (!flights.length) return this.text.noDirect;
    return structuredClone(flights) as unknown as Json;
  }

  get_user_details({ user_id, password }: Args): Json {
    const user = this.users[user_id as string];
    if (!Object.hasOwn(this.users, user_id as string) || user.password !== password) return { status: 'error', message: this.text.badLogin };
    const { password: _hidden, ...details } = user;
    return details as unknown as Json;
  }

  get_reservation_details({ reservation_id, user_id }: Args): Json {
    let reservations: Reservation[];
    if (reservation_id) reservations = this.reservations.filter((r) => r.reservation_id === reservation_id);
    else if (user_id) reservations = this.reservations.filter((r) => r.user_id === user_id);
    else return { status: 'error', message: this.text.needId };
    return reservations.map((r) => ({ ...r, flight_info: this.flights.find((f) => f.flight_no === r.flight_no) ?? null })) as unknown as Json;
  }

  find_transfer_flights({ origin_city, transfer_city, destination_city }: Args): Json {
    const first = this.flights.filter((f) => f.origin === origin_city && f.destination === transfer_city && f.status === 'available');
    const second = this.flights.filter((f) => f.origin === transfer_city && f.destination === destination_city && f.status === 'available');
    const pairs: Json[] = [];
    for (const a of first) for (const b of second) if (parseTime(a.arrival_time) < parseTime(b.depart_time)) pairs.push(structuredClone({ first_leg: a, second_leg: b }) as unknown as Json);
    return pairs.length ? pairs : this.text.noTransfer;
  }

  get_baggage_allowance({ membership_level, cabin_class }: Args): Json {
    const index = this.cabinIndex(cabin_class as string);
    return index < 0 ? 0 : (FREE_BAGS[membership_level as string]?.[index] ?? 0);
  }

  calculate_baggage_fee({ membership_level, cabin_class, baggage_count }: Args): Json {
    const index = this.cabinIndex(cabin_class as string);
    if (index < 0 || !FREE_BAGS[membership_level as string]) return this.text.badCabin;
    return Math.max((baggage_count as number) - FREE_BAGS[membership_level as string][index], 0) * 50;
  }

  /** Books a flight: ticket plus 50 per bag beyond the allowance, from cash or bank. */
  reserve_flight({ user_id, password, flight_no, cabin, payment_method, baggage_count }: Args): Json {
    const user = this.users[user_id as string];
    if (!Object.hasOwn(this.users, user_id as string) || user.password !== password) return this.text.authFailed;
    const flight = this.flights.find((f) => f.flight_no === flight_no && f.status === 'available');
    if (!flight) return this.text.noFlight;
    const fee = this.calculate_baggage_fee({ membership_level: user.membership_level, cabin_class: cabin, baggage_count });
    if (typeof fee !== 'number') return fee;
    const total = this.price(flight, cabin as string) + fee;
    if (payment_method !== 'cash' && payment_method !== 'bank') return this.text.badPayment;
    const balanceKey = payment_method === 'cash' ? 'cash_balance' : 'bank_balance';
    if (total > user[balanceKey]) return this.text.poor(payment_method);
    user[balanceKey] -= total;
    flight.seats_available -= 1;
    const reservation_id = `res_${this.reservations.length + 1}`;
    this.reservations.push({ reservation_id, user_id: user_id as string, flight_no: flight_no as string, payment_method, cabin: cabin as string, baggage: baggage_count as number });
    return this.text.booked(reservation_id, total);
  }

  /** Adds `amount` (negative to charge) to a balance; false when that would go below zero. */
  private updateBalance(user: TravelUser, method: string, amount: number): boolean {
    if (method !== 'cash' && method !== 'bank') return true;
    const key = method === 'cash' ? 'cash_balance' : 'bank_balance';
    if (user[key] + amount < 0) return false;
    user[key] += amount;
    return true;
  }

  modify_flight({ user_id, reservation_id, new_flight_no, new_cabin, add_baggage, new_payment_method }: Args): Json {
    const reservation = this.reservations.find((r) => r.reservation_id === reservation_id && r.user_id === user_id);
    if (!reservation) return this.text.noReservation;
    const current = this.flights.find((f) => f.flight_no === reservation.flight_no);
    if (!current) return this.text.noFlightInfo;
    const method = (new_payment_method as string | null | undefined) || reservation.payment_method;
    const user = this.users[user_id as string];
    const messages: string[] = [];
    if (new_flight_no && new_flight_no !== reservation.flight_no) {
      const next = this.flights.find((f) => f.flight_no === new_flight_no);
      if (!next || next.origin !== current.origin || next.destination !== current.destination) return this.text.changeFailed;
      reservation.flight_no = new_flight_no as string;
      messages.push(this.text.flightChanged);
    }
    if (new_cabin && new_cabin !== reservation.cabin) {
      // As released: priced on the reservation's flight before any change, an unknown cabin at 0.
      const cabinPrice = (cabin: string) => [current.economy_price, current.business_price][this.cabinIndex(cabin)] ?? 0;
      const difference = cabinPrice(new_cabin as string) - cabinPrice(reservation.cabin);
      reservation.cabin = new_cabin as string;
      if (difference > 0) messages.push(this.updateBalance(user, method, -difference) ? this.text.cabinPaid(difference) : this.text.cabinPoor);
      else if (difference < 0) {
        this.updateBalance(user, method, -difference);
        messages.push(this.text.cabinRefunded(-difference));
      }
    }
    const added = (add_baggage as number | null | undefined) ?? 0;
    if (added > 0) {
      const index = this.cabinIndex(reservation.cabin);
      const free = index < 0 ? 0 : (FREE_BAGS[user.membership_level]?.[index] ?? 0);
      const total = reservation.baggage + added;
      const cost = Math.max(0, total - free) * 50;
      if (cost > 0) messages.push(this.updateBalance(user, method, -cost) ? this.text.baggagePaid(cost) : this.text.baggagePoor);
      reservation.baggage = total;
    }
    if (!messages.length) messages.push(this.text.noFees);
    return messages.join(' ');
  }

  /** Refunds the ticket to cash: in full when the airline cancelled or more than a day ahead, less 10% otherwise. */
  cancel_reservation({ user_id, reservation_id, reason }: Args): Json {
    const user = this.users[user_id as string];
    if (!Object.hasOwn(this.users, user_id as string)) return this.text.badUser;
    const reservation = this.reservations.find((r) => r.reservation_id === reservation_id && r.user_id === user_id);
    if (!reservation) return this.text.badReservation;
    const flight = this.flights.find((f) => f.flight_no === reservation.flight_no);
    if (!flight) return this.text.badFlight;
    const depart = parseTime(flight.depart_time);
    if (NOW > depart) return this.text.used;
    const price = this.price(flight, reservation.cabin);
    if (reason === this.text.airlineCancelled || depart - NOW > DAY) {
      user.cash_balance += price;
      return reason === this.text.airlineCancelled ? this.text.cancelledByAirline(pythonNumber(price, false)) : this.text.freeCancel(pythonNumber(price, false));
    }
    const fee = price * 0.1;
    const refund = price - fee;
    user.cash_balance += refund;
    return this.text.feeCancel(pythonNumber(fee, true), pythonNumber(refund, true));
  }
}
