import type { Json } from '../../../core/records.ts';
import { configBoolean, Sandbox, type MethodSpec, type SandboxClassName } from './sandbox.ts';

const TEXT = {
  en: { wifiOn: 'Wi-Fi has been turned on', loggedIn: 'Device has been logged in' },
  zh: { wifiOn: 'wifi已经打开', loggedIn: '设备已经登录' },
};

export const BASE_METHODS: readonly MethodSpec[] = [
  { name: 'turn_on_wifi', description: { en: 'Turn on WiFi connection.', zh: '打开wifi连接。' }, params: {} },
  { name: 'login_device', description: { en: 'Log in to the device.', zh: '登录设备。' }, params: {} },
];

/**
 * The phone itself (ACEBench's BaseApi): Wi-Fi and the device login. Messages, reminders and the
 * food platform extend it, so each of them holds its own copy of both flags, and a call such as
 * turn_on_wifi reaches every involved instance (see execute.ts).
 */
export class BaseApi extends Sandbox {
  readonly className: SandboxClassName = 'BaseApi';
  readonly savedAttributes: readonly string[] = ['wifi', 'logged_in'];
  wifi = false;
  logged_in = true;

  methods(): readonly MethodSpec[] {
    return BASE_METHODS;
  }

  protected releasedConfigKeys(): readonly string[] {
    return ['wifi', 'logged_in'];
  }

  protected loadableAttributes(): readonly string[] {
    return [];
  }

  /** As released: absent keys reset Wi-Fi to off and the device to logged in. */
  protected loadScenario(config: Record<string, Json>, where: string): void {
    this.wifi = configBoolean(config, 'wifi', false, where);
    this.logged_in = configBoolean(config, 'logged_in', true, where);
  }

  /** Turns Wi-Fi on (always succeeds). */
  turn_on_wifi(): Json {
    this.wifi = true;
    return { status: true, message: TEXT[this.language].wifiOn };
  }

  /** Logs the device in (always succeeds). */
  login_device(): Json {
    this.logged_in = true;
    return { status: true, message: TEXT[this.language].loggedIn };
  }
}
