import { formTarget, pageHeaders } from './page-headers';

describe('hosted pages: form-action', () => {
  it('self alone when the interaction ends nowhere else (a device flow, an error page)', () => {
    expect(pageHeaders('/oidc')['content-security-policy']).toContain("form-action 'self';");
  });

  it("the origins of the interaction's redirect URIs, once each, and nothing of their paths or queries", () => {
    const csp = pageHeaders('/oidc', ['https://app.example.com/cb?x=1', 'https://app.example.com/other', 'http://127.0.0.2:8080/callback', 'com.example.app:/oauth'])['content-security-policy']!;
    expect(csp).toContain("form-action 'self' https://app.example.com http://127.0.0.2:8080 com.example.app:;");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('a value that could add to the policy, or a scheme that runs code, is left out', () => {
    for (const bad of ['https://a.example; script-src *', 'javascript:alert(1)', 'data:text/html,x', 'not a uri', "https://a.example/'unsafe-inline'"]) {
      const t = formTarget(bad);
      expect(t === undefined || /^https:\/\/a\.example$/.test(t)).toBe(true);
    }
    const csp = pageHeaders('/oidc', ['https://a.example; script-src *', 'javascript:alert(1)'])['content-security-policy']!;
    expect(csp.split(';').map((d) => d.trim().split(' ')[0])).toEqual(['default-src', 'style-src', 'script-src', 'connect-src', 'img-src', 'form-action', 'base-uri', 'frame-ancestors']);
    expect(csp).not.toContain('javascript');
    expect(csp).not.toContain('*');
  });
});
