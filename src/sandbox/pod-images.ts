/**
 * The images the sandbox's kubelet runs as processes (everything else is simulated: reported
 * running, nothing started): the demo's app and the Gateway API conformance suite's echo server in
 * its HTTP mode. Each is a small script of ours (images/), started with this Node on the Pod's
 * loopback addresses; the port comes from the environment variable the image reads.
 */
import { fileURLToPath } from 'node:url';

export interface PodImage {
  /** The script the container runs. */
  script: string;
  /** The environment variable its port is read from, and the port without it. */
  portEnv: string;
  defaultPort: number;
}

const script = (file: string) => fileURLToPath(new URL(`./images/${file}`, import.meta.url));

/** A reference to a repository, with any tag or digest. */
const ref = (repo: string) =>
  new RegExp(
    `^(?:docker\\.io/)?${repo.replace(/[.]/g, '\\.')}(?::[\\w][\\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$`,
  );

const CATALOGUE: { match: RegExp; image: PodImage }[] = [
  {
    match: ref('npl-lb/demo-web'),
    image: { script: script('demo-web.mjs'), portEnv: 'PORT', defaultPort: 8080 },
  },
  {
    match:
      /^(?:registry\.k8s\.io\/gateway-api|gcr\.io\/k8s-staging-gateway-api)\/echo-basic(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$/,
    image: { script: script('echo-basic.mjs'), portEnv: 'HTTP_PORT', defaultPort: 3000 },
  },
];

/** The catalogue's entry for an image reference (undefined: not one the kubelet runs). */
export function podImage(reference: string): PodImage | undefined {
  return CATALOGUE.find((c) => c.match.test(reference))?.image;
}
