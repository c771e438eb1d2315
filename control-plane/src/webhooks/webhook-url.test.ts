import { describe, expect, it } from 'vitest';
import { parseWebhookUrl } from './webhook-url.js';

describe('webhook URL form', () => {
  it('takes http and https URLs', () => {
    expect(parseWebhookUrl('https://hooks.example.com/gateway?team=a').url?.href).toBe('https://hooks.example.com/gateway?team=a');
    expect(parseWebhookUrl('http://93.184.215.14:8080/x').problem).toBeNull();
  });

  it('refuses other schemes, credentials, fragments, relative and overlong URLs', () => {
    expect(parseWebhookUrl('ftp://hooks.example.com/').problem).toMatch(/http or https/);
    expect(parseWebhookUrl('file:///etc/passwd').problem).toMatch(/http or https/);
    expect(parseWebhookUrl('javascript:alert(1)').problem).toMatch(/http or https/);
    expect(parseWebhookUrl('/relative').problem).toMatch(/absolute/);
    expect(parseWebhookUrl('https://user:pw@hooks.example.com/').problem).toMatch(/credentials/);
    expect(parseWebhookUrl('https://user@hooks.example.com/').problem).toMatch(/credentials/);
    expect(parseWebhookUrl('https://hooks.example.com/#frag').problem).toMatch(/fragment/);
    expect(parseWebhookUrl(`https://hooks.example.com/${'a'.repeat(2048)}`).problem).toMatch(/2048/);
  });
});
