/**
 * A fresh self-signed server certificate for `--tls`, valid for localhost and the loopback addresses.
 * `selfsigned` (and the X.509 library under it, about 0.4 s of CPU to load) is loaded only when a
 * certificate is made: most runs of a command that can make one do not.
 */

export interface ServerCertificate {
  cert: string;
  key: string;
}

export async function selfSignedCertificate(host: string): Promise<ServerCertificate> {
  const altNames: { type: 2 | 7; value?: string; ip?: string }[] = [
    { type: 2, value: 'localhost' },
    { type: 7, ip: '127.0.0.1' },
    { type: 7, ip: '::1' },
  ];
  if (host !== '127.0.0.1' && host !== '::1' && host !== 'localhost') {
    altNames.push(/^[\d.]+$|:/.test(host) ? { type: 7, ip: host } : { type: 2, value: host });
  }
  const notAfter = new Date(Date.now() + 365 * 24 * 3600 * 1000);
  const { generate } = await import('selfsigned');
  const pems = await generate([{ name: 'commonName', value: 'npl-lb' }], {
    keyType: 'ec',
    curve: 'P-256',
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}
