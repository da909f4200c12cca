// The platform's name resolution: a stand-in for the machine's resolver. It is the environment, not your
// code: do not change this file.
//
// In production, Node's dns.lookup calls getaddrinfo, which asks the DNS servers named in
// /etc/resolv.conf, every time (no cache on the machine, as on most containers). The workshop cannot point
// getaddrinfo at a DNS server of its own without editing /etc/resolv.conf, so this module does the closest
// thing: it replaces dns.lookup, for names under hotpath.test, with a query to the workshop's DNS server
// (DNS_SERVER) through Node's other resolver, c-ares (dns.Resolver), every time. Everything that calls
// dns.lookup (net, http, dgram, hot-shots, fetch) now resolves these names as it would through
// getaddrinfo. Other names and IP addresses are looked up as before.
//
// One difference shows in the tools: a getaddrinfo lookup in flight is a GetAddrInfoReqWrap, listed by
// process.getActiveResourcesInfo(); a c-ares query is a QUERYWRAP, which that list leaves out and
// async_hooks sees (the workshop's probe counts them as pending lookups).
import dns, { type LookupAddress, type LookupAllOptions, type LookupOneOptions, type LookupOptions } from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

/** Names the workshop's DNS server answers for. */
export const ZONE = '.hotpath.test';

const server = process.env.DNS_SERVER;

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The resolver every lookup of a hotpath.test name goes through, pointed at DNS_SERVER. */
export const platformResolver = new dns.Resolver({ timeout: 5000, tries: 6 });
if (server) platformResolver.setServers([server]);

const originalLookup = dns.lookup;

function notFound(hostname: string, code: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`getaddrinfo ${code} ${hostname}`);
  error.code = code;
  error.syscall = 'getaddrinfo';
  (error as NodeJS.ErrnoException & { hostname: string }).hostname = hostname;
  return error;
}

/** dns.lookup's signature and answers, resolving hotpath.test names through the DNS server each time. */
function platformLookup(hostname: string, options: number | LookupOptions | LookupCallback, callback?: LookupCallback): void {
  const done = (typeof options === 'function' ? options : callback) as LookupCallback;
  const opts: LookupOptions = typeof options === 'number' ? { family: options } : typeof options === 'object' && options ? options : {};
  const name = String(hostname ?? '').toLowerCase();
  if (net.isIP(name) || !name.endsWith(ZONE) || !server) {
    (originalLookup as (h: string, o: LookupOptions, c: LookupCallback) => void)(hostname, opts, done);
    return;
  }
  // The zone has IPv4 records only, as a getaddrinfo asking for AF_INET would see.
  if (opts.family === 6 || opts.family === 'IPv6') {
    process.nextTick(done, notFound(hostname, 'ENOTFOUND'), opts.all ? [] : '');
    return;
  }
  platformResolver.resolve4(name, (error, addresses) => {
    if (error || addresses.length === 0) {
      done(notFound(hostname, error?.code === 'ETIMEOUT' ? 'EAI_AGAIN' : 'ENOTFOUND'), opts.all ? [] : '');
      return;
    }
    if (opts.all) done(null, addresses.map((address) => ({ address, family: 4 })));
    else done(null, addresses[0]!, 4);
  });
}

dns.lookup = platformLookup as typeof dns.lookup;
// The promise form, for code that awaits dns.promises.lookup.
dns.promises.lookup = ((hostname: string, options?: number | LookupOneOptions | LookupAllOptions) =>
  new Promise((resolve, reject) =>
    platformLookup(hostname, (options ?? {}) as LookupOptions, (error, address, family) =>
      error ? reject(error) : resolve(Array.isArray(address) ? address : { address, family: family! }),
    ),
  )) as typeof dns.promises.lookup;
// ESM code that imported { lookup } from 'node:dns' sees the replacement too.
syncBuiltinESMExports();
