// A local SAML identity provider that signs real assertions: a key pair and self-signed certificate made with
// openssl, responses built as SAML 2.0 XML and signed with xml-crypto (RSA-SHA256, exclusive C14N), the way IdPs
// such as Keycloak or Authentik sign assertions.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';

/** A signing identity: private key and certificate in PEM. */
export interface SigningKey {
  privateKey: string;
  certificate: string;
}

/** Generates an RSA key and a self-signed certificate valid for two days. */
export function generateSigningKey(commonName: string): SigningKey {
  const dir = mkdtempSync(join(tmpdir(), 'holdfast-saml-idp-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '2', '-subj', `/CN=${commonName}`], { stdio: 'ignore' });
    return { privateKey: readFileSync(join(dir, 'key.pem'), 'utf8'), certificate: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What the SP asked for, decoded from the HTTP-Redirect binding URL. */
export interface AuthnRequestInfo {
  id: string;
  acsUrl: string;
  spEntityId: string;
  relayState: string | null;
}

/** Decodes `SAMLRequest` (deflated, base64) from the redirect Holdfast sent the browser to. */
export function readAuthnRequest(location: string): AuthnRequestInfo {
  const url = new URL(location);
  const xml = inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
  const attribute = (name: string) => new RegExp(`\\s${name}="([^"]+)"`).exec(xml)?.[1];
  return {
    id: attribute('ID')!,
    acsUrl: attribute('AssertionConsumerServiceURL')!,
    spEntityId: /<saml:Issuer[^>]*>([^<]+)<\/saml:Issuer>/.exec(xml)![1]!,
    relayState: url.searchParams.get('RelayState'),
  };
}

/** Options of one response. */
export interface ResponseOptions {
  inResponseTo: string;
  acsUrl: string;
  audience: string;
  nameId: string;
  attributes?: Record<string, string | string[]>;
  /** Shifts every time in the assertion (negative: an old, expired assertion). */
  offsetMs?: number;
  /** Sign with this key instead of the IdP's own (a forged signature). */
  signWith?: SigningKey;
  /** Leave the assertion unsigned. */
  unsigned?: boolean;
  /** Change the signed content after signing (breaks the digest). */
  tamper?: (xml: string) => string;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The IdP: entity id and signing key; builds base64 `SAMLResponse` values for the ACS. */
export class TestSamlIdp {
  readonly key: SigningKey;

  constructor(
    readonly entityId = 'https://idp.example.test/realms/holdfast',
    readonly ssoUrl = 'https://idp.example.test/realms/holdfast/protocol/saml',
  ) {
    this.key = generateSigningKey('holdfast-test-idp');
  }

  response(options: ResponseOptions): string {
    const now = Date.now() + (options.offsetMs ?? 0);
    const iso = (ms: number) => new Date(ms).toISOString();
    const attributes = Object.entries(options.attributes ?? {})
      .map(([name, value]) => {
        const values = (Array.isArray(value) ? value : [value]).map((v) => `<saml:AttributeValue>${escapeXml(v)}</saml:AttributeValue>`).join('');
        return `<saml:Attribute Name="${escapeXml(name)}">${values}</saml:Attribute>`;
      })
      .join('');
    const assertionId = `_a${randomUUID().replace(/-/g, '')}`;
    const assertion =
      `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${assertionId}" Version="2.0" IssueInstant="${iso(now)}">` +
      `<saml:Issuer>${escapeXml(this.entityId)}</saml:Issuer>` +
      `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${escapeXml(options.nameId)}</saml:NameID>` +
      `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
      `<saml:SubjectConfirmationData NotOnOrAfter="${iso(now + 5 * 60_000)}" Recipient="${escapeXml(options.acsUrl)}" InResponseTo="${options.inResponseTo}"/>` +
      `</saml:SubjectConfirmation></saml:Subject>` +
      `<saml:Conditions NotBefore="${iso(now - 30_000)}" NotOnOrAfter="${iso(now + 5 * 60_000)}">` +
      `<saml:AudienceRestriction><saml:Audience>${escapeXml(options.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
      `<saml:AuthnStatement AuthnInstant="${iso(now)}" SessionIndex="_s${randomUUID()}"><saml:AuthnContext>` +
      `<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>` +
      `</saml:AuthnContext></saml:AuthnStatement>` +
      (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '') +
      `</saml:Assertion>`;
    let xml =
      `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ` +
      `ID="_r${randomUUID().replace(/-/g, '')}" Version="2.0" IssueInstant="${iso(now)}" Destination="${escapeXml(options.acsUrl)}" InResponseTo="${options.inResponseTo}">` +
      `<saml:Issuer>${escapeXml(this.entityId)}</saml:Issuer>` +
      `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
      assertion +
      `</samlp:Response>`;
    if (!options.unsigned) xml = this.signAssertion(xml, options.signWith ?? this.key);
    if (options.tamper) xml = options.tamper(xml);
    return Buffer.from(xml, 'utf8').toString('base64');
  }

  private signAssertion(xml: string, key: SigningKey): string {
    const signer = new SignedXml({
      privateKey: key.privateKey,
      publicCert: key.certificate,
      signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
    });
    signer.addReference({
      xpath: "//*[local-name(.)='Assertion']",
      transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
      digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    });
    signer.computeSignature(xml, { location: { reference: "//*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' } });
    return signer.getSignedXml();
  }
}
