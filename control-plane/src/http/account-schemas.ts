import { ACCOUNT_ROLES, PROJECT_ROLES } from '../auth/permissions.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, PASSWORD_POLICY_TEXT } from '../auth/password-policy.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from './record-list.js';
import { uuidSchema } from './schemas.js';

/**
 * Request shapes of the account routes (users, passwords, sign-out, members by email). Accounts
 * are answered as the shared `User` schema (schemas.ts), like every other response shape.
 */
export const emailSchema = { type: 'string', format: 'email', maxLength: 254 } as const;

/** A new password: the length part of the policy is in the schema, the email part is checked by the route. */
export const passwordSchema = {
  type: 'string',
  minLength: MIN_PASSWORD_LENGTH,
  maxLength: MAX_PASSWORD_LENGTH,
  description: `The password policy: ${PASSWORD_POLICY_TEXT}.`,
} as const;

export const userParams = {
  type: 'object',
  required: ['user_id'],
  additionalProperties: false,
  properties: { user_id: { ...uuidSchema, description: 'User id.' } },
} as const;

export const newUserBody = {
  type: 'object',
  required: ['email', 'password'],
  additionalProperties: false,
  properties: {
    email: emailSchema,
    password: passwordSchema,
    role: { type: 'string', enum: ACCOUNT_ROLES, default: 'member' },
  },
} as const;

export const userListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    email: { type: 'string', minLength: 1, maxLength: 254, description: 'Only accounts whose email contains this text, in any case.' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Accounts per page.' },
    cursor: { type: 'string', minLength: 1, maxLength: 512, description: '`next_cursor` of the previous page.' },
  },
} as const;

export const userPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    role: { type: 'string', enum: ACCOUNT_ROLES },
    disabled: { type: 'boolean', description: 'true ends every session of the account and refuses new sign-ins.' },
  },
} as const;

export const ownPasswordBody = {
  type: 'object',
  required: ['current_password', 'new_password'],
  additionalProperties: false,
  properties: {
    // Any length: an old password from before the policy must still be able to prove itself.
    current_password: { type: 'string', minLength: 1, maxLength: MAX_PASSWORD_LENGTH },
    new_password: passwordSchema,
  },
} as const;

export const resetPasswordBody = {
  type: 'object',
  required: ['new_password'],
  additionalProperties: false,
  properties: { new_password: passwordSchema },
} as const;

export const memberBody = {
  type: 'object',
  required: ['role'],
  additionalProperties: false,
  properties: {
    user_id: { ...uuidSchema, description: 'The account to add. Give this or `email`.' },
    email: { ...emailSchema, description: 'The account to add, by email (any case). Give this or `user_id`.' },
    role: { type: 'string', enum: PROJECT_ROLES },
  },
} as const;

export const noContent = (description: string) => ({ type: 'null', description }) as const;
