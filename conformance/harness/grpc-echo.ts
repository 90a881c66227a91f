/**
 * The upstream suite's gRPC echo (echo-basic with GRPC_ECHO_SERVER, its grpcecho.proto copied in
 * conformance/manifests/) played by the harness with @grpc/grpc-js: a Pod's server answers Echo
 * and EchoTwo with the method it saw, the request's headers and authority, and who it is; EchoThree
 * is left unimplemented, as upstream leaves it. The client side sends one RPC as the suite's
 * DefaultClient does (plain HTTP/2 with prior knowledge, the authority and metadata asked for) and
 * gives back the status code and the response.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';

const PROTO = new URL('../manifests/grpcecho.proto', import.meta.url);
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

export interface GrpcEchoServer {
  close(): Promise<void>;
}

/** A Pod's gRPC echo on ip:port (h2c). */
export async function startGrpcEcho(
  id: { namespace: string; pod: string },
  ip: string,
  port: number,
): Promise<GrpcEchoServer> {
  const server = new grpc.Server();
  const answer =
    (m: GrpcMethod): grpc.handleUnaryCall<Record<string, unknown>, Record<string, unknown>> =>
    (call, done) => {
      const md = call.metadata.getMap();
      const headers = Object.entries(md).map(([key, v]) => ({ key, value: String(v) }));
      done(null, {
        assertions: {
          fullyQualifiedMethod: `/${GRPC_SERVICE}/${m}`,
          headers,
          authority: call.getHost(),
          context: { namespace: id.namespace, pod: id.pod },
        },
        request: {},
      });
    };
  // EchoThree has no handler: grpc-js answers it UNIMPLEMENTED, as echo-basic does.
  server.addService(SERVICE, { Echo: answer('Echo'), EchoTwo: answer('EchoTwo') });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`${ip}:${port}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        // Calls still open do not hold the shutdown.
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000).unref();
      }),
  };
}

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
