"""The trained NNSelect embedding as the project's "citeomatic" text encoder."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from scholargraph.errors import NotFitted
from scholargraph.graph.encoders import ENCODERS, load_encoder, make_encoder
from scholargraph.graph.features import current_model_paths, load_current_models, make_current
from scholargraph.graph.vectors import text_vectors
from scholargraph.ranking.citations.encoder import CiteomaticEncoder
from scholargraph.ranking.citations.nnselect import NNSelect

SMALL = {"dim": 16, "epochs": 1, "batch_size": 64, "k_nn": 10, "min_df": 1}


@pytest.fixture(scope="module")
def selector(world):
    return NNSelect(**SMALL).fit(world)


def test_paper_vectors_are_the_selectors_embeddings(world, selector):
    encoder = CiteomaticEncoder.from_selector(selector)
    vectors = text_vectors(world, encoder, batch_size=7)  # several batches
    titles, abstracts = world.text_fields()
    assert vectors.shape == (world.n_papers, 16)
    np.testing.assert_allclose(vectors, selector.encode(titles, abstracts), atol=1e-6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_lone_text_is_read_as_an_abstract_and_empty_text_gives_a_zero_row(world, selector):
    encoder = CiteomaticEncoder.from_selector(selector)
    text = world.abstracts[0]
    got = encoder.encode([text, "   "])
    np.testing.assert_allclose(got[0], selector.encode([None], [text])[0], atol=1e-6)
    assert not got[1].any()


def test_cannot_be_fitted_from_texts():
    with pytest.raises(NotFitted, match="citations train"):
        make_encoder("citeomatic").fit(["a text"])
    with pytest.raises(NotFitted):
        make_encoder("citeomatic").encode(["a text"])


def test_save_and_load_by_name_give_identical_vectors(tmp_path, world, selector):
    encoder = CiteomaticEncoder.from_selector(selector)
    path = encoder.save(tmp_path / "enc")
    assert json.loads((path / "config.json").read_text())["encoder"] == "citeomatic"
    again = load_encoder(path)
    assert isinstance(again, CiteomaticEncoder)
    np.testing.assert_array_equal(text_vectors(world, again), text_vectors(world, encoder))


def test_the_graph_layer_loads_it_by_importing_the_module_its_config_names(tmp_path, world, selector):
    """`graph` never imports `ranking` itself: in a fresh process the name is unknown until the saved config's
    module (one of this package's) is imported, which load_encoder does, so that a command that never imported
    the citation models (`features`) still reads the graph's encoder. A module outside the package is never
    imported from a config file: that one is refused, naming the module."""
    path = CiteomaticEncoder.from_selector(selector).save(tmp_path / "enc")
    code = ("import sys; from scholargraph.graph.encoders import load_encoder, ENCODERS; "
            "assert 'citeomatic' not in ENCODERS\n"
            "e = load_encoder(sys.argv[1]); print(type(e).__name__, e.dim)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["CiteomaticEncoder", "16"]

    config = path / "config.json"
    saved = json.loads(config.read_text())
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "config.json").write_text(json.dumps({**saved, "encoder": "elsewhere", "module": "os"}))
    with pytest.raises(NotFitted, match="unknown encoder 'elsewhere' \\(its module os registers it"):
        load_encoder(foreign)
    assert "citeomatic" in ENCODERS  # registered here by the import at the top


def test_every_ranking_side_loader_registers_the_plug_in_first(tmp_path, selector):
    """A process that imports only the ranking side's loader of the graph's models (the services and benches
    load through it) reads a Citeomatic encoder."""
    models = tmp_path / "models"
    make_current(models, {"encoder": str(CiteomaticEncoder.from_selector(selector).save(models / "enc"))})
    code = ("import sys; from pathlib import Path\n"
            "from scholargraph.ranking.graph_models import load_graph_models\n"
            "print(type(load_graph_models(Path(sys.argv[1]))[1]).__name__)")
    out = subprocess.run([sys.executable, "-c", code, str(models)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["CiteomaticEncoder"]


def test_made_current_it_is_what_features_and_reviewers_load(tmp_path, world, selector):
    models = tmp_path / "models"
    make_current(models, {"topics": "/somewhere/topics"})
    path = CiteomaticEncoder.from_selector(selector).save(models / "citations" / "v1" / "encoder")
    make_current(models, {"encoder": str(path)})
    assert current_model_paths(models) == {"topics": "/somewhere/topics", "encoder": str(path)}
    (models / "current.json").write_text(json.dumps({"encoder": str(path)}))
    topic_model, encoder = load_current_models(models)
    assert topic_model is None and isinstance(encoder, CiteomaticEncoder)
