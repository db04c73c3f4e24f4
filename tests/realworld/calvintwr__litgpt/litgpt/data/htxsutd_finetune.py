# excerpt of calvintwr/litgpt litgpt/data/htxsutd_finetune.py: the finetune data module's fields (verbatim lines, in order)
class PreparedUltraChat(TypedDict):
    train_dataset: SFTMultiTurnDataset
    val_dataset: None
    test_dataset: None
class UltraChatMessage(TypedDict):
    content: str
    role: Literal["user", "assistant"]
class UltraChatRow(TypedDict):
    prompt: str
    unique_id: str
    conversation: List[UltraChatMessage]
    actual_num_turns: int
@dataclass
class HTXSUTDFinetune(DataModule):
    mask_prompt: bool = True
    prompt_style: Union[str, PromptStyle] = "llama3"
    ignore_index: int = -100
    seed: int = 42
    num_workers: int = 4
    include_multiturn_conversations: bool = True
    dataset_path: Path = Path("dataset/HTXSUTD-finetune")
    access_token: Optional[str] = field(repr=False, default=os.getenv("HF_TOKEN"))
    tokenizer: Optional[Tokenizer] = field(default=None, init=False, repr=False)
    batch_size: int = field(default=1, init=False, repr=False)
    max_seq_length: int = field(default=-1, init=False, repr=False)
    train_dataset: Optional[SFTMultiTurnDataset] = field(default=None, init=False, repr=False)
    test_dataset: Optional[SFTMultiTurnDataset] = field(default=None, init=False, repr=False)
