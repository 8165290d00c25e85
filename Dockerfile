# cmd/mcp over HTTP, for one replica or many (docs/deploy.md).
#
#   docker build -t gordis-mcp .
#   docker run -p 8080:8080 -v "$PWD:/workspace" \
#     -v /etc/gordis/tokens:/run/secrets/gordis-tokens:ro gordis-mcp
#
# The image runs as an unprivileged user; the workspace is a volume that
# user must be able to write (uid 65532, or run with --user).

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# A static binary: the runtime stage has no C library.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/mcp ./cmd/mcp

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcp /usr/local/bin/mcp
VOLUME /workspace
EXPOSE 8080
# The tokens come from a file, mounted as a secret: never from the image,
# nor from an argument that ps shows.
ENTRYPOINT ["/usr/local/bin/mcp", "--workspace", "/workspace", "--http", "0.0.0.0:8080", \
            "--token-file", "/run/secrets/gordis-tokens", "--log-format", "json"]
