// Standard Webhooks signing lives in shared: the proxy signs guardrail webhook calls with it too.
export { SECRET_PREFIX, MIN_SECRET_BYTES, MAX_SECRET_BYTES, generateSecret, secretProblem, secretKey, sign, newEventId } from '@gateway/shared';
