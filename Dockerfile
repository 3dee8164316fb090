# dc_toolkit on Debian 12, installed by the same script and make targets as the
# README (scripts/check-fresh.sh runs these RUN lines in a fresh Debian 12
# chroot, so this file cannot drift from the README's set-up).
#   docker build -t dc_toolkit .
#   docker run --rm -v "$PWD:/data" dc_toolkit inspect_dataset /data/era5.nc
FROM debian:12
WORKDIR /src
COPY . /src
RUN sh scripts/install-deps.sh && make build && make install
ENTRYPOINT ["dc_toolkit"]
CMD ["--help"]
