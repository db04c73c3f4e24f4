# excerpt of calvintwr/litgpt litgpt/data/htxsutd.py: the HTXSUTD data module's fields (verbatim lines, in order)
class ParquetDataset(Dataset):
@dataclass
class HTXSUTD(DataModule):
    dataset_path: Path = Path("dataset/HTXSUTD-pretrain")
    num_workers: int = 8
    batch_size: int = field(init=False, repr=False, default=1)
    max_seq_length: int = field(init=False, repr=False, default=2048)
    tokenizer: Optional[Tokenizer] = None
    shuffle: bool = True
