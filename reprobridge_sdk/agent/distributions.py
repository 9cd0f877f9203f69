"""Import names and the distributions that provide them (the Builder's map).

A module the code imports is provided by the distribution of the same name unless this map
says otherwise (``sklearn`` -> ``scikit-learn``). Entries are added where real repositories
showed a gap; a name that is its own distribution needs no entry.
"""

from __future__ import annotations

__all__ = ["BUILD_TOOLS", "IMPORT_TO_DISTRIBUTION", "INDEX_PACKAGES", "MISNAMED", "distribution_of"]

#: Import names whose distribution has another name. Names missing here are taken as their
#: own distribution name (``numpy`` -> ``numpy``).
IMPORT_TO_DISTRIBUTION: dict[str, str] = {
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "cv2": "opencv-python-headless",
    "PIL": "Pillow",
    "yaml": "PyYAML",
    "bs4": "beautifulsoup4",
    "Crypto": "pycryptodome",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "jwt": "PyJWT",
    "attr": "attrs",
    "google.protobuf": "protobuf",
    "tensorflow_datasets": "tensorflow-datasets",
    "tf_keras": "tf-keras",
    "torchvision": "torchvision",
    "gym": "gym",
    "git": "GitPython",
    "magic": "python-magic",
    "serial": "pyserial",
    "usb": "pyusb",
    "wx": "wxPython",
    "OpenGL": "PyOpenGL",
    "Bio": "biopython",
    "mpl_toolkits": "matplotlib",
    "pylab": "matplotlib",
    "sentencepiece": "sentencepiece",
    "fitz": "PyMuPDF",
    "docx": "python-docx",
    "pptx": "python-pptx",
    "Levenshtein": "python-Levenshtein",
    "lightgbm": "lightgbm",
    "xgboost": "xgboost",
    "catboost": "catboost",
    "umap": "umap-learn",
    "hdbscan": "hdbscan",
    "igraph": "python-igraph",
    "community": "python-louvain",
    "sklearn_crfsuite": "sklearn-crfsuite",
    "faiss": "faiss-cpu",
    "jax": "jax",
    "haiku": "dm-haiku",
    "tree": "dm-tree",
    "absl": "absl-py",
    "gflags": "python-gflags",
    "tables": "tables",
    "h5py": "h5py",
    "pkg_resources": "setuptools",
    "setuptools": "setuptools",
    "nltk": "nltk",
    "spacy": "spacy",
    "gensim": "gensim",
    "statsmodels": "statsmodels",
    "seaborn": "seaborn",
    "tqdm": "tqdm",
    "pandas": "pandas",
    "scipy": "scipy",
    "numpy": "numpy",
    "matplotlib": "matplotlib",
    "torch": "torch",
    "tensorflow": "tensorflow",
    "keras": "keras",
    "transformers": "transformers",
    "datasets": "datasets",
    "wandb": "wandb",
    "tensorboardX": "tensorboardX",
    "joblib": "joblib",
    "networkx": "networkx",
    "sympy": "sympy",
    "requests": "requests",
    "click": "click",
    "ruamel": "ruamel.yaml",
    "zmq": "pyzmq",
    "lxml": "lxml",
    # gaps of research code of every era (the name imported is not the distribution's)
    "Image": "Pillow",
    "theano": "Theano",
    "lasagne": "Lasagne",
    "pytorch_lightning": "pytorch-lightning",
    "hydra": "hydra-core",
    "tensorflow_probability": "tensorflow-probability",
    "tensorflow_hub": "tensorflow-hub",
    "tensorflow_addons": "tensorflow-addons",
    "keras_preprocessing": "Keras-Preprocessing",
    "sonnet": "dm-sonnet",
    "gin": "gin-config",
    "ml_collections": "ml-collections",
    "torch_geometric": "torch-geometric",
    "torch_scatter": "torch-scatter",
    "torch_sparse": "torch-sparse",
    "pyro": "pyro-ppl",
    "skopt": "scikit-optimize",
    "sentence_transformers": "sentence-transformers",
    "tensorboard_logger": "tensorboard-logger",
    "progressbar": "progressbar2",
    "msgpack_numpy": "msgpack-numpy",
    "unidecode": "Unidecode",
    "pulp": "PuLP",
    "past": "future",
    "cairo": "pycairo",
    "OpenSSL": "pyOpenSSL",
    "googleapiclient": "google-api-python-client",
    "jose": "python-jose",
    "multipart": "python-multipart",
    "slugify": "python-slugify",
    "snappy": "python-snappy",
    "sklearn_pandas": "sklearn-pandas",
    "skgarden": "scikit-garden",
}

#: Names authors write in requirement files that the package index holds as something else:
#: a placeholder that installs nothing or refuses to (``pytorch``, ``sklearn``), or a GPU
#: build a CPU needs the plain build of (``tensorflow-gpu``). The version specifiers stay.
MISNAMED: dict[str, tuple[str, str]] = {
    "pytorch": ("torch", "'pytorch' on the package index is a placeholder; PyTorch is 'torch'"),
    "sklearn": (
        "scikit-learn",
        "'sklearn' on the package index is a deprecated placeholder that refuses to install",
    ),
    "tensorflow-gpu": (
        "tensorflow",
        "'tensorflow-gpu' needs CUDA to import; the same versions of 'tensorflow' run on a CPU",
    ),
}

#: Build tools: never a requirement because ``setup.py`` imports them (``pkg_resources``
#: in the code maps to setuptools, unpinned).
BUILD_TOOLS = frozenset({"setuptools", "wheel", "pip", "distutils"})

#: Top-level import names of packages from the index that a repository's own module names
#: (``utils``, ``metrics``, ``models``) must not be taken for: ``from torch.utils.data import
#: DataLoader`` beside a root ``utils.py`` is torch's, and ``from sklearn.metrics import
#: f1_score`` in SGC's own ``metrics.py`` is scikit-learn's. The names of the import map
#: are among them.
INDEX_PACKAGES: frozenset[str] = frozenset(
    {
        "absl",
        "autograd",
        "botorch",
        "catboost",
        "chainer",
        "datasets",
        "dgl",
        "einops",
        "flax",
        "gensim",
        "gpytorch",
        "gym",
        "gymnasium",
        "h5py",
        "haiku",
        "hydra",
        "jax",
        "jaxlib",
        "keras",
        "lasagne",
        "lightgbm",
        "lightning",
        "matplotlib",
        "mxnet",
        "networkx",
        "nltk",
        "numba",
        "numpy",
        "ogb",
        "omegaconf",
        "optax",
        "paddle",
        "pandas",
        "pyro",
        "pytorch_lightning",
        "rdkit",
        "requests",
        "scipy",
        "seaborn",
        "six",
        "spacy",
        "statsmodels",
        "sympy",
        "tensorboard",
        "tensorboardX",
        "tensorflow",
        "theano",
        "timm",
        "tokenizers",
        "torch",
        "torch_geometric",
        "torch_scatter",
        "torch_sparse",
        "torchaudio",
        "torchtext",
        "torchvision",
        "tqdm",
        "transformers",
        "wandb",
        "xgboost",
    }
) | {name.split(".")[0] for name in IMPORT_TO_DISTRIBUTION}


def distribution_of(module: str) -> str:
    """The distribution that provides the top-level ``module``."""
    return IMPORT_TO_DISTRIBUTION.get(module, module)
