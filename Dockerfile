# The scholargraph CLI against an external Neo4j (see docker-compose.yml); no managed server inside.
FROM python:3.11-slim
ENV PIP_NO_CACHE_DIR=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml setup.cfg README.md ./
COPY scholargraph ./scholargraph
# The CPU build of torch keeps the image small; the app has no use for CUDA.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch \
 && pip install .
ENTRYPOINT ["scholargraph"]
CMD ["--help"]
