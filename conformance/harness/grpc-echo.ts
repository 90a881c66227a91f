/**
 * The client of the upstream suite's gRPC echo (echo-basic with GRPC_ECHO_SERVER, which the
 * sandbox's kubelet runs: src/sandbox/images/echo-basic.mjs, its grpcecho.proto beside it), with
 * @grpc/grpc-js: the server answers Echo and EchoTwo with the method it saw, the request's headers
 * and authority, and who it is; EchoThree is unimplemented, as upstream leaves it. One RPC is sent
 * as the suite's DefaultClient does (plain HTTP/2 with prior knowledge, the authority and metadata asked for) and
 * gives back the status code and the response.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';

// The proto the echo-basic image the sandbox's kubelet runs serves (src/sandbox/images/).
const PROTO = new URL('../../src/sandbox/images/grpcecho.proto', import.meta.url);
export const GRPC_SERVICE = 'gateway_api_conformance.echo_basic.grpcecho.GrpcEcho';
export type GrpcMethod = 'Echo' | 'EchoTwo' | 'EchoThree';

const root = protobuf.loadSync(fileURLToPath(PROTO));
const request = root.lookupType('gateway_api_conformance.echo_basic.grpcecho.EchoRequest');
const response = root.lookupType('gateway_api_conformance.echo_basic.grpcecho.EchoResponse');

export interface EchoAssertions {
  fullyQualifiedMethod: string;
  headers: { key: string; value: string }[];
  authority: string;
  context: { namespace: string; pod: string };
}

const encode = (t: protobuf.Type) => (m: object) => Buffer.from(t.encode(t.fromObject(m)).finish());
const decode = (t: protobuf.Type) => (b: Buffer) =>
  t.toObject(t.decode(b), { defaults: true }) as Record<string, unknown>;

const definition = (m: GrpcMethod) => ({
  path: `/${GRPC_SERVICE}/${m}`,
  requestStream: false,
  responseStream: false,
  requestSerialize: encode(request),
  requestDeserialize: decode(request),
  responseSerialize: encode(response),
  responseDeserialize: decode(response),
});
const SERVICE: grpc.ServiceDefinition = {
  Echo: definition('Echo'),
  EchoTwo: definition('EchoTwo'),
  EchoThree: definition('EchoThree'),
};

export interface RpcResult {
  /** The gRPC status code (grpc.status: 0 OK, 12 UNIMPLEMENTED, 14 UNAVAILABLE ...). */
  code: number;
  details: string;
  assertions?: EchoAssertions;
}

export interface Rpc {
  method: GrpcMethod;
  /** The :authority (the suite's RequestMetadata.Authority); default the address. */
  authority?: string;
  metadata?: Record<string, string>;
}

/** One unary RPC to gwAddr (host:port) in plain HTTP/2, on a channel of its own. */
export async function sendRpc(gwAddr: string, rpc: Rpc, timeoutMs = 5000): Promise<RpcResult> {
  const client = new grpc.Client(gwAddr, grpc.credentials.createInsecure(), {
    ...(rpc.authority ? { 'grpc.default_authority': rpc.authority } : {}),
  });
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(rpc.metadata ?? {})) md.set(k.toLowerCase(), v);
  const d = SERVICE[rpc.method]!;
  try {
    return await new Promise<RpcResult>((resolve) => {
      client.makeUnaryRequest(
        d.path,
        d.requestSerialize,
        d.responseDeserialize as (b: Buffer) => Record<string, unknown>,
        {},
        md,
        { deadline: Date.now() + timeoutMs },
        (err, value) => {
          if (err) resolve({ code: err.code, details: err.details });
          else
            resolve({
              code: grpc.status.OK,
              details: '',
              assertions: (value as { assertions?: EchoAssertions } | undefined)?.assertions,
            });
        },
      );
    });
  } finally {
    client.close();
  }
}

export const STATUS = grpc.status;
