import { describe, expect, it } from 'vitest';
import { commandEnv } from './command-env.js';

describe('the environment a command sees', () => {
  it('drops every variable that looks like a secret: tokens, passwords, keys, cloud credentials, URLs with a password', () => {
    const secrets = {
      GITHUB_TOKEN: 'ghp', GH_TOKEN: 'gh', NPM_TOKEN: 'npm', NODE_AUTH_TOKEN: 'n', HF_TOKEN: 'hf', VAULT_TOKEN: 'v',
      AWS_ACCESS_KEY_ID: 'AKIA', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't', AWS_PROFILE: 'prod',
      GOOGLE_APPLICATION_CREDENTIALS: '/k.json', AZURE_CLIENT_SECRET: 'a', AZURE_CLIENT_ID: 'id', ARM_CLIENT_SECRET: 'a',
      STRIPE_SECRET: 's', DB_PASSWORD: 'p', PGPASSWORD: 'p', MYSQL_PWD: 'p', SIGNING_KEY: 'k', SSH_PRIVATE_KEY: 'k', GPG_PASSPHRASE: 'p',
      SENTRY_AUTH_TOKEN: 's', npm_config__authToken: 'x', DOCKER_AUTH_CONFIG: '{}', SSH_AUTH_SOCK: '/run/agent', KRB5CCNAME: 'FILE:/tmp/k',
      DATABASE_URL: 'postgres://app:hunter2@db:5432/app', SESSION_COOKIE: 'c', SERVICE_CREDENTIALS: 'c', ENCRYPTION_KEY: 'k',
    };
    const kept = { PATH: '/bin', HOME: '/root', PWD: '/w', OLDPWD: '/', LANG: 'C.UTF-8', TERM: 'xterm', USER: 'me', SHELL: '/bin/bash', NODE_ENV: 'test', CI: 'true', EDITOR: 'vi', REDIS_URL: 'redis://cache:6379', KEYBOARD_LAYOUT: 'us' };
    expect(commandEnv({ ...secrets, ...kept })).toEqual(kept);
  });

  it('drops the OpenTelemetry exporter’s headers, where a collector’s key rides, and keeps its endpoint and the trace context', () => {
    const env = { OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=k', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'authorization=Bearer k', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', TRACEPARENT: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    expect(commandEnv(env)).toEqual({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', TRACEPARENT: env.TRACEPARENT });
  });

  it('drops bridle’s secrets and keeps the rest', () => {
    expect(commandEnv({ PATH: '/bin', OPENAI_API_KEY: 'sk', BRIDLE_TOKEN: 't', ANTHROPIC_API_KEY: 'x', HOME: '/root' })).toEqual({ PATH: '/bin', HOME: '/root' });
  });
});
