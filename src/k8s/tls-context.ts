/** TLS of the Kubernetes client: one parsed `SecureContext` per set of credentials. */
import * as https from 'node:https';
import * as tls from 'node:tls';

/**
 * TLS options with the CA, client certificate and key made into one `SecureContext` (one per
 * options object): without it, Node parses them again for every socket (~5 ms each; an apply
 * opens up to 16 sockets). When
 * they do not parse, the options are left as given, so the error surfaces on connect as before.
 */
export function withSecureContext(o: https.AgentOptions): https.AgentOptions {
  const { ca, cert, key, pfx, passphrase, ...rest } = o;
  if (o.secureContext || (ca === undefined && cert === undefined && key === undefined && pfx === undefined)) return o;
  // Inventory entries on one cluster share their credentials' options object: one context for all.
  let secureContext = secureContexts.get(o);
  try {
    secureContext ??= tls.createSecureContext({ ca, cert, key, pfx, passphrase });
  } catch {
    return o;
  }
  secureContexts.set(o, secureContext);
  return { ...rest, secureContext };
}

const secureContexts = new WeakMap<https.AgentOptions, tls.SecureContext>();
