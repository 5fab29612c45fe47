import { PyException, hex } from '../python.ts';
import { lookup, isEmail, isPhone, userOf, type Args, type JsonObject, type SimTool, type ToolContext } from '../tool.ts';

// ToolTalk's AccountTools suite (src/tooltalk/apis/account.py): descriptions, parameters and
// messages as released; behaviour in the same order of checks, so the same failure wins.

const PLUGIN = 'AccountTools';

/** "xxxxxxxx-xxxx-xxxx", drawn as UserLogin and RegisterUser draw it. */
function sessionToken(ctx: ToolContext): string {
  return `${hex(ctx.random.randint(0, 0xffffffff), 8)}-${hex(ctx.random.randint(0, 0xffff), 4)}-${hex(ctx.random.randint(0, 0xffff), 4)}`;
}

function publicUser(username: JsonObject[string], user: JsonObject): JsonObject {
  return { username, email: user.email, phone: user.phone, name: user.name };
}

export const ChangePassword: SimTool = {
  name: 'ChangePassword',
  plugin: PLUGIN,
  description: 'Changes the password of an account.',
  parameters: {
    old_password: { type: 'string', description: 'The old password of the user.', required: true },
    new_password: { type: 'string', description: 'The new password of the user.', required: true },
  },
  output: { status: { type: 'string', description: 'success or failed' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token, old_password, new_password }: Args) {
    const user = userOf(ctx, session_token);
    if (user.password !== old_password) throw new PyException('The old password is incorrect.');
    user.password = new_password;
    return { status: 'success' };
  },
};

export const DeleteAccount: SimTool = {
  name: 'DeleteAccount',
  plugin: PLUGIN,
  description: "Deletes a user's account, requires user to be logged in.",
  parameters: { password: { type: 'string', description: 'The password of the user.', required: true } },
  output: { status: { type: 'string', description: 'success or failed.' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token, password }: Args) {
    const user = userOf(ctx, session_token);
    if (user.password !== password) throw new PyException('The password is incorrect.');
    ctx.databases.Account.delete(user.username as string);
    return { status: 'success' };
  },
};

export const GetAccountInformation: SimTool = {
  name: 'GetAccountInformation',
  plugin: PLUGIN,
  description: 'Retrieves account information of logged in user.',
  parameters: {},
  output: {
    user: {
      type: 'object',
      properties: { username: { type: 'string' }, email: { type: 'string' }, phone: { type: 'string' }, name: { type: 'string' } },
      description: 'The account information of the user.',
    },
  },
  isAction: false,
  requiresAuth: true,
  call(ctx, { session_token }: Args) {
    const user = userOf(ctx, session_token);
    return { user: publicUser(user.username, user) };
  },
};

export const LogoutUser: SimTool = {
  name: 'LogoutUser',
  plugin: PLUGIN,
  description: 'Logs user out.',
  parameters: {},
  output: { status: { type: 'string', description: 'success or failed.' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token }: Args) {
    userOf(ctx, session_token).session_token = null;
    return { status: 'success' };
  },
};

export const QueryUser: SimTool = {
  name: 'QueryUser',
  plugin: PLUGIN,
  description: 'Finds users given a username or email.',
  parameters: {
    username: { type: 'string', description: 'The username of the user, required if email is not supplied.', required: false },
    email: { type: 'string', description: 'The email of the user, required if username is not supplied. May match multiple users', required: false },
  },
  output: {
    users: {
      type: 'array',
      item: {
        type: 'object',
        description: 'The account information of the user.',
        properties: {
          username: { type: 'string', description: 'The username of the user.' },
          email: { type: 'string', description: 'The email of the user.' },
          phone: { type: 'string', description: 'The phone number of the user.' },
          name: { type: 'string', description: 'The name of the user.' },
        },
      },
      description: 'Users matching the query.',
    },
  },
  isAction: false,
  requiresAuth: true,
  call(ctx, { session_token, username, email }: Args) {
    userOf(ctx, session_token);
    if (username === null && email === null) throw new PyException('You need to provide at least one of username and email.');
    if (username === null) {
      return { users: [...ctx.databases.Account].filter(([, user]) => user.email === email).map(([name, user]) => publicUser(name, user)) };
    }
    const user = lookup(ctx.databases.Account, username);
    return { users: user ? [publicUser(user.username, user)] : [] };
  },
};

export const RegisterUser: SimTool = {
  name: 'RegisterUser',
  plugin: PLUGIN,
  description: 'Register a new user.',
  parameters: {
    username: { type: 'string', description: 'The username of the user.', required: true },
    password: { type: 'string', description: 'The password of the user.', required: true },
    email: { type: 'string', description: 'The email of the user.', required: true },
    name: { type: 'string', description: 'The name of the user.', required: false },
    phone: { type: 'string', description: 'The phone of the user in the format xxx-xxx-xxxx.', required: false },
  },
  output: {
    session_token: { type: 'string', description: 'The token of the user.' },
    user: { type: 'object', description: 'The account information of the user.' },
  },
  isAction: true,
  requiresAuth: false,
  call(ctx, { username, password, email, name, phone }: Args) {
    if (lookup(ctx.databases.Account, username)) throw new PyException('The username already exists.');
    if (!isEmail(email)) throw new PyException('The email format is invalid.');
    if (phone !== null && !isPhone(phone)) throw new PyException('The phone number format is invalid.');
    const token = sessionToken(ctx);
    ctx.databases.Account.set(String(username), { username, password, session_token: token, email, phone, name });
    return { session_token: token, user: { username, email, phone, name } };
  },
};

export const ResetPassword: SimTool = {
  name: 'ResetPassword',
  plugin: PLUGIN,
  description: 'Resets the password of a user using a verification code.',
  parameters: {
    username: { type: 'string', description: 'The username of the user.', required: true },
    verification_code: { type: 'string', description: 'The 6 digit verification code sent to the user.', required: true },
    new_password: { type: 'string', description: 'The new password of the user.', required: true },
  },
  output: { status: { type: 'string', description: 'success or failed' } },
  isAction: true,
  requiresAuth: false,
  call(ctx, { username, verification_code, new_password }: Args) {
    const user = lookup(ctx.databases.Account, username);
    if (!user) throw new PyException('The username does not exist.');
    if (!('verification_code' in user) || user.verification_code !== verification_code) throw new PyException('The verification code is incorrect.');
    user.password = new_password;
    return { status: 'success' };
  },
};

export const SendVerificationCode: SimTool = {
  name: 'SendVerificationCode',
  plugin: PLUGIN,
  description: 'Initiates a password reset for a user by sending a verification code to a backup email.',
  parameters: {
    username: { type: 'string', description: 'The username of the user.', required: true },
    email: { type: 'string', description: 'The email of the user.', required: true },
  },
  output: { status: { type: 'string', description: 'success or failed' } },
  isAction: true,
  requiresAuth: false,
  call(ctx, { username, email }: Args) {
    const user = lookup(ctx.databases.Account, username);
    if (!user) throw new PyException('The username does not exist.');
    if (user.email !== email) throw new PyException('The email is incorrect.');
    user.verification_code = String(ctx.random.randint(0, 999999)).padStart(6, '0');
    return { status: 'success' };
  },
};

export const UpdateAccountInformation: SimTool = {
  name: 'UpdateAccountInformation',
  plugin: PLUGIN,
  description: 'Updates account information of a user.',
  parameters: {
    password: { type: 'string', description: 'The password of the user.', required: true },
    new_email: { type: 'string', description: 'The new email of the user.', required: false },
    new_phone_number: { type: 'string', description: 'The new phone number of the user in the format xxx-xxx-xxxx.', required: false },
    new_name: { type: 'string', description: 'The new name of the user.', required: false },
  },
  // Documented as "success" though the tool returns "status" (kept as released).
  output: { success: { type: 'string', description: 'success or failed.' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token, password, new_email, new_phone_number, new_name }: Args) {
    const user = userOf(ctx, session_token);
    if (user.password !== password) throw new PyException('The password is incorrect.');
    if (new_email === null && new_phone_number === null) throw new PyException('You need to provide at least one of new_email and new_phone_number.');
    if (new_email !== null) {
      if (!isEmail(new_email)) throw new PyException('The email is invalid.');
      user.email = new_email;
    }
    if (new_phone_number !== null) {
      if (!isPhone(new_phone_number)) throw new PyException('The phone number is invalid.');
      user.phone = new_phone_number;
    }
    if (new_name !== null) user.name = new_name;
    return { status: 'success' };
  },
};

export const UserLogin: SimTool = {
  name: 'UserLogin',
  plugin: PLUGIN,
  description: 'Logs in a user returns a token.',
  parameters: {
    username: { type: 'string', description: 'The username of the user.', required: true },
    password: { type: 'string', description: 'The password of the user.', required: true },
  },
  output: { session_token: { type: 'string', description: 'The token of the user.' } },
  isAction: true,
  requiresAuth: false,
  call(ctx, { username, password }: Args) {
    const user = lookup(ctx.databases.Account, username);
    if (!user) throw new PyException('The username does not exist.');
    if (user.password !== password) throw new PyException('The password is incorrect.');
    if (user.session_token !== null) throw new PyException('The user is already logged in.');
    user.session_token = sessionToken(ctx);
    return { session_token: user.session_token };
  },
};

export const ACCOUNT_TOOLS: readonly SimTool[] = [
  GetAccountInformation,
  DeleteAccount,
  UserLogin,
  LogoutUser,
  ChangePassword,
  RegisterUser,
  SendVerificationCode,
  ResetPassword,
  QueryUser,
  UpdateAccountInformation,
];
