# npl-lb image: the agent and the controller in one executable (`npl-lb agent`, `npl-lb controller`).
#
#   npm run image                       # ghcr.io/npl-lb/npl-lb:<package.json version>, docker or podman
#   npm run image -- --with-haproxy     # the same with HAProxy, tagged <version>-haproxy
#
# The image installs exactly what `npm pack` produces (the tarball a test installs into an empty
# folder), runs as a non-root user by default, and carries iptables and iproute2 for the agent's
# forwarding rules (for iptables the chart runs the agent as root with NET_ADMIN; docs/security.md).
# WITH_HAPROXY=true adds HAProxy for the controller's `runtime` transport beside it.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# prepack type-checks and builds dist/; the tarball is the package as published. The SBOM lists what the image
# installs: the production dependencies of the lockfile (CycloneDX).
RUN npm pack --pack-destination /out \
  && npm sbom --omit=dev --sbom-format=cyclonedx --sbom-type=application > /out/sbom.cdx.json

FROM ${NODE_IMAGE}
ARG WITH_HAPROXY=false
RUN apt-get update \
  && apt-get install -y --no-install-recommends iptables iproute2 ca-certificates \
  && if [ "$WITH_HAPROXY" = "true" ]; then apt-get install -y --no-install-recommends haproxy; fi \
  && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/npl-lb-*.tgz /tmp/
COPY --from=build /out/sbom.cdx.json /usr/share/npl-lb/sbom.cdx.json
RUN npm install --global --omit=dev --no-audit --no-fund /tmp/npl-lb-*.tgz \
  && rm /tmp/npl-lb-*.tgz \
  && npl-lb --version
# 65532: the "nonroot" user of distroless images, which the chart's securityContext expects.
RUN groupadd --gid 65532 nonroot && useradd --uid 65532 --gid 65532 --no-create-home --shell /usr/sbin/nologin nonroot
USER 65532:65532
ENTRYPOINT ["npl-lb"]
CMD ["--help"]
